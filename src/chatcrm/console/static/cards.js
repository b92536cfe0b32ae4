// The cards of the two boards (contract H): an <article> named by the contact's full name
// or the opportunity's name, focusable, draggable; what a person scans a column for (an
// "Unread" mark on a contact whose conversation has news, K.3). Not draggable for a caller
// who may not move it (K.3: controls a role does not allow are not offered).
import { h } from "./dom.js";
import { formatPhone } from "./words.js";

// Amounts as numbers, without a currency (the API names none), in the one format the
// amount fields read ("1,200.50": forms.js): in a reader's locale that writes 1.200,50 a
// total shown one way and typed the other would be read as another amount. Every amount
// the console shows goes through `money` (cards, totals, the pipeline, a contact's panel).
// Formatted from their digits (api.js keeps them as text): Intl formats a string of digits
// exactly, where a float would change the last decimal of large amounts.
const MONEY = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const DECIMAL = /^-?\d+(\.\d+)?$/;

export function money(value) {
  const text = String(value ?? "");
  return MONEY.format(DECIMAL.test(text) ? text : Number(value) || 0);
}

// Money in ten-thousandths (section 0: at most four decimals), to add and subtract
// amounts exactly: a column's total when a card moves.
function units(value) {
  const text = String(value ?? "0");
  if (!DECIMAL.test(text)) return BigInt(Math.round((Number(value) || 0) * 10000));
  const negative = text.startsWith("-");
  const [whole, fraction = ""] = text.replace("-", "").split(".");
  const scaled = BigInt(whole + fraction.padEnd(4, "0").slice(0, 4));
  return negative ? -scaled : scaled;
}

export function addMoney(a, b, sign = 1) {
  const sum = units(a) + BigInt(sign) * units(b);
  const digits = (sum < 0n ? -sum : sum).toString().padStart(5, "0");
  const fraction = digits.slice(-4).replace(/0+$/, "");
  return `${sum < 0n ? "-" : ""}${digits.slice(0, -4)}${fraction ? `.${fraction}` : ""}`;
}

export function fullName(contact) {
  return [contact.name, contact.lastname].filter(Boolean).join(" ");
}

function phone(contact) {
  return formatPhone(contact.internalWhatsappNumber || contact.platformSenderPhone || "");
}

function tagChips(tags) {
  if (!tags.length) return null;
  return h(
    "ul",
    { class: "tags", "aria-label": "Tags" },
    tags.map((tag) => {
      const chip = h("li", { class: "tag" }, tag.name);
      // Through the CSSOM: the page's policy refuses inline style attributes.
      chip.style.setProperty("--tag-color", tag.color || "#888");
      return chip;
    }),
  );
}

function contactBody(contact) {
  return [
    // K.3: a conversation not read yet (an inbound message since it was last opened).
    contact.isRead === false ? h("p", { class: "unread" }, "Unread") : null,
    phone(contact) ? h("p", { class: "phone" }, phone(contact)) : null,
    tagChips(contact.tags || []),
    contact.assignedAgentName ? h("p", { class: "agent" }, contact.assignedAgentName) : null,
    contact.lastMessage ? h("p", { class: "message" }, contact.lastMessage) : null,
    contact.isSolved ? h("p", { class: "solved" }, "Solved") : null,
  ];
}

const OUTCOMES = { 1: ["won", "Won"], 2: ["lost", "Lost"] };

function opportunityBody(opportunity, contactName) {
  const outcome = OUTCOMES[opportunity.winLossStatus];
  return [
    h("p", { class: "code" }, opportunity.opportCode),
    h("p", { class: "amount", "aria-label": `Amount ${money(opportunity.amount)}` }, money(opportunity.amount)),
    // The board names the contact (`contactName`); null when it is not linked.
    contactName ? h("p", { class: "contact", "data-contact": opportunity.contactId }, contactName) : null,
    outcome ? h("p", { class: `badge ${outcome[0]}` }, outcome[1]) : null,
  ];
}

// `open` is called on click, Enter or Space; `contactName` is an opportunity's contact;
// `movable`: whether the caller may drag it to another place.
export function card(kind, record, open, contactName = null, movable = true) {
  const id = `card-${record.id}`;
  const title = kind === "contact" ? fullName(record) : record.name;
  const element = h(
    "article",
    {
      class: "card",
      "aria-labelledby": id,
      "data-id": record.id,
      tabindex: 0,
      draggable: movable ? "true" : "false",
      onclick: open,
      onkeydown: (event) => {
        if (event.target !== element || (event.key !== "Enter" && event.key !== " ")) return;
        event.preventDefault(); // Space would scroll the page
        open();
      },
    },
    h("h4", { id }, title),
    kind === "contact" ? contactBody(record) : opportunityBody(record, contactName),
  );
  return element;
}
