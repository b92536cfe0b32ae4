// "New contact" and "New opportunity" dialogs (contract H). Not built yet.
export function newRecordDialog(ctx, kind) {}
