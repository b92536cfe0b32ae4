// The contacts board (contract H): a <section> per contact stage, in stage order, named by
// the stage and headed by its count; an <article> per card, named by the contact's full
// name, in orderInCards order, 50 shown per column with "Load more".
import { every } from "./api.js";
import { h } from "./dom.js";

const SHOWN = 50;

function fullName(contact) {
  return [contact.name, contact.lastname].filter(Boolean).join(" ");
}

function phone(contact) {
  return contact.internalWhatsappNumber || contact.platformSenderPhone || "";
}

function card(contact) {
  const name = fullName(contact);
  const id = `card-${contact.id}`;
  return h(
    "article",
    { class: "card", "aria-labelledby": id, "data-id": contact.id },
    h("h3", { id }, name),
    phone(contact) ? h("p", { class: "phone" }, phone(contact)) : null,
    contact.tags.length
      ? h(
          "ul",
          { class: "tags", "aria-label": "Tags" },
          contact.tags.map((tag) => {
            const chip = h("li", { class: "tag" }, tag.name);
            // Through the CSSOM: the page's policy refuses inline style attributes.
            chip.style.setProperty("--tag-color", tag.color || "#888");
            return chip;
          }),
        )
      : null,
    contact.assignedAgentName ? h("p", { class: "agent" }, contact.assignedAgentName) : null,
    contact.lastMessage ? h("p", { class: "message" }, contact.lastMessage) : null,
    contact.isSolved ? h("p", { class: "solved" }, "Solved") : null,
  );
}

function column(stage, contacts) {
  const id = `stage-${stage.id}`;
  const list = h("div", { class: "cards" });
  let shown = 0;
  const more = h("button", { type: "button", class: "more" }, "Load more");
  const showMore = () => {
    list.append(...contacts.slice(shown, shown + SHOWN).map(card));
    shown = Math.min(contacts.length, shown + SHOWN);
    more.hidden = shown >= contacts.length;
  };
  more.addEventListener("click", showMore);
  showMore();
  return h(
    "section",
    { class: "column", "aria-labelledby": id, "data-stage": stage.id },
    h("h2", { id }, stage.name),
    h("p", { class: "count", "aria-label": `${contacts.length} contacts` }, String(contacts.length)),
    list,
    more,
  );
}

export async function board(ctx, kind) {
  const { session, workspace } = ctx;
  // The full shape: a card shows the WhatsApp number, which gets and lists hide.
  const contacts = await every(session, "/api/contact", { shape: "full" });
  const byStage = new Map(workspace.contactStages.map((stage) => [stage.id, []]));
  for (const contact of contacts) byStage.get(contact.stageId)?.push(contact);
  for (const list of byStage.values()) list.sort((a, b) => a.orderInCards - b.orderInCards);
  return h(
    "div",
    { class: "board", role: "region", "aria-label": "Contacts board" },
    workspace.contactStages.map((stage) => column(stage, byStage.get(stage.id))),
  );
}
