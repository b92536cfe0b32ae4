// Detail panels (contract H): a contact's or an opportunity's fields, edits, activities and
// history. Not built yet.
export function openPanel(ctx, kind, id) {}
