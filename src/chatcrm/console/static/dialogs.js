// "New contact" and "New opportunity" dialogs (contract H): labelled fields, "Create" posts
// only what was filled, and the API's messages show next to the fields they name. Each body
// is sent with its own Idempotency-Key, the same for a repeat of it: a double click (or a
// retry) creates once.
import { h } from "./dom.js";
import {
  Feedback,
  amountInput,
  amountOf,
  input,
  labelled,
  newKey,
  noneOr,
  retriedUnderItsKey,
  select,
  uid,
} from "./forms.js";
import { allows } from "./session.js";
import { explain } from "./words.js";

// An opportunity created here says so (contract B.2: creationTypeId 3, the console).
const MADE_IN_THE_CONSOLE = 3;

const CHANNELS = [
  [1, "Webchat"],
  [2, "WhatsApp"],
  [3, "Messenger"],
  [4, "Instagram"],
  [5, "Telegram"],
  [6, "Portal"],
  [7, "API"],
];

function contactFields(ctx) {
  const name = input({ autofocus: true });
  const lastname = input();
  const email = input({ type: "email" });
  const phone = input({ type: "tel" });
  const channel = select(CHANNELS, "7");
  const stage = select(ctx.workspace.contactStages.map((s) => [s.id, s.name]));
  return {
    path: "/api/contact",
    rows: [
      labelled("Name", name),
      labelled("Last name", lastname),
      labelled("Email", email),
      labelled("Phone", phone),
      labelled("Channel", channel),
      labelled("Stage", stage),
    ],
    // The wire names and the aliases this dialog sends, as the API's errors name them.
    controls: { name, lastname, email, phone, internalWhatsappNumber: phone, platformId: channel, stageId: stage },
    body: () => ({
      name: name.value.trim(),
      lastname: lastname.value.trim(),
      email: email.value.trim(),
      phone: phone.value.trim(),
      platformId: Number(channel.value),
      stageId: stage.value,
    }),
  };
}

// The contact of a new opportunity: a select of the newest 100, narrowed by a search.
function contactChoice(ctx) {
  const choice = select([["", "(none)"]]);
  const search = input({ type: "search" });
  let asked = 0;
  const fill = async () => {
    const turn = ++asked;
    const page = await ctx.call("GET", "/api/contact", { query: { pageSize: 100, q: search.value.trim() } });
    if (turn !== asked) return;
    const kept = choice.value;
    const people = page.data.map((c) => ({
      id: c.id,
      name: [c.name, c.lastname].filter(Boolean).join(" ") + (c.email ? ` <${c.email}>` : ""),
    }));
    choice.replaceChildren(...noneOr(people).map(([v, text]) => h("option", { value: v }, text)));
    choice.value = people.some((p) => p.id === kept) ? kept : "";
  };
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => fill().catch(() => {}), 250);
  });
  fill().catch(() => {});
  return { choice, search };
}

function opportunityFields(ctx) {
  const name = input({ autofocus: true });
  const { control: amount, hint } = amountInput();
  const description = h("textarea", { rows: 3 });
  // The contact is chosen among those the caller may read; without contacts:read, none.
  const { choice, search } = allows(ctx.session, "contacts:read")
    ? contactChoice(ctx)
    : { choice: null, search: null };
  const amountRow = labelled("Amount", amount);
  amountRow.append(hint);
  const stage = select(ctx.workspace.opportunityStages.map((s) => [s.id, s.name]));
  return {
    path: "/api/opportunity",
    rows: [
      labelled("Name", name),
      amountRow,
      labelled("Description", description),
      ...(choice ? [labelled("Find a contact", search), labelled("Contact", choice)] : []),
      labelled("Stage", stage),
    ],
    controls: {
      name,
      amount,
      description,
      ...(choice ? { contactId: choice } : {}),
      stageId: stage,
    },
    body: () => ({
      name: name.value.trim(),
      amount: amount.value.trim() === "" ? "" : amountOf(amount.value),
      description: description.value,
      contactId: choice ? choice.value : "",
      stageId: stage.value,
      creationTypeId: MADE_IN_THE_CONSOLE,
    }),
  };
}

export function newRecordDialog(ctx, kind) {
  const title = kind === "contact" ? "New contact" : "New opportunity";
  const fields = kind === "contact" ? contactFields(ctx) : opportunityFields(ctx);
  const titleId = uid("dialog-title");
  const feedback = new Feedback();
  const create = h("button", { type: "submit" }, "Create");
  const cancel = h("button", { type: "button" }, "Cancel");
  const form = h(
    "form",
    { class: "new-record", novalidate: true },
    fields.rows,
    feedback.slot,
    h("div", { class: "buttons" }, create, cancel),
  );
  const dialog = h(
    "dialog",
    { class: "sheet new-record-dialog", "aria-labelledby": titleId },
    h("h2", { id: titleId }, title),
    form,
  );
  let attempt = { body: null, key: null };
  let busy = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    // Only the filled fields.
    const body = Object.fromEntries(Object.entries(fields.body()).filter(([, v]) => v !== ""));
    const text = JSON.stringify(body);
    if (text !== attempt.body) attempt = { body: text, key: newKey() };
    busy = true;
    create.disabled = true;
    feedback.clear();
    try {
      await ctx.call("POST", fields.path, { body, headers: { "Idempotency-Key": attempt.key } });
      dialog.close();
      await ctx.refresh();
      // The focus back on the button that opened it (drawn again with the view).
      [...document.querySelectorAll(".toolbar button")].find((b) => b.textContent === title)?.focus();
    } catch (error) {
      if (!retriedUnderItsKey(error)) attempt = { body: null, key: null };
      const open = (id) => ctx.openPanel("contact", id);
      feedback.error(await explain(ctx, kind, error, open), fields.controls);
    } finally {
      busy = false;
      create.disabled = false;
    }
  });
  cancel.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}
