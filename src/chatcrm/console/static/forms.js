// What the detail panels and the "New …" dialogs share: labelled controls, the API's
// messages shown next to the fields they name (and in an alert), and small formats.
import { passing } from "./api.js";
import { h } from "./dom.js";
import { labelOf } from "./words.js";

let made = 0;

// A page-unique id for an element that a label or aria-describedby points to.
export function uid(prefix) {
  made += 1;
  return `${prefix}-${made}`;
}

// A labelled control in its row; the control gets an id when it has none.
export function labelled(label, control) {
  if (!control.id) control.id = uid("field");
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control);
}

export function input(attributes = {}) {
  return h("input", { type: "text", autocomplete: "off", ...attributes });
}

// A select of `[value, text]` pairs.
export function select(options, value) {
  const element = h(
    "select",
    {},
    options.map(([v, text]) => h("option", { value: v }, text)),
  );
  if (value !== undefined) element.value = value;
  return element;
}

export function noneOr(items, none = "(none)") {
  return [["", none], ...items.map((item) => [item.id, item.name])];
}

// What an amount field says it takes (its description).
export const AMOUNT_FORMAT = "Digits with an optional decimal point, e.g. 1200.50 or 1,200.50.";

// A number when the text is one — thousands separated by commas or spaces allowed
// ("1,200.50", "1 200") — else the text itself, so that the API names the problem.
export function amountOf(text) {
  const trimmed = text.trim();
  const grouped = /^-?\d{1,3}([,\s\u00a0\u202f]\d{3})+(\.\d+)?$/.test(trimmed);
  const plain = grouped ? trimmed.replace(/[,\s\u00a0\u202f]/g, "") : trimmed;
  return /^-?\d+(\.\d+)?$/.test(plain) ? exactNumber(plain) : trimmed;
}

// The digits as a JSON number, written as they are (JSON.rawJSON, where the browser has
// it): a float would change some amounts the API keeps exactly.
function exactNumber(digits) {
  try {
    if (JSON.rawJSON) return JSON.rawJSON(digits);
  } catch {
    // not JSON's form of a number (a leading zero): the float below
  }
  return Number(digits);
}

// An amount input with its format as its description (shown under it).
export function amountInput() {
  const control = input({ inputmode: "decimal" });
  const hint = h("span", { class: "hint", id: uid("hint") }, AMOUNT_FORMAT);
  control.setAttribute("aria-describedby", hint.id);
  return { control, hint };
}

// A timestamp for people, the exact value kept in `datetime` (`options`: how
// toLocaleString writes it; a message's time is short).
export function time(iso, options = undefined) {
  if (!iso) return "";
  const date = new Date(iso);
  const text = Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, options);
  return h("time", { datetime: iso }, text);
}

// Whether a failed POST is tried again under its Idempotency-Key: no answer came, or one
// asking to try again (429, 5xx). Any other answer is the request's own and is kept under
// its key (docs/api.md 7.2): a try after its cause was fixed needs a new key, or the old
// refusal would come back.
export function retriedUnderItsKey(error) {
  return passing(error);
}

// An Idempotency-Key: crypto.randomUUID where the page is a secure context, else the same
// version-4 form from getRandomValues (which every context has).
export function newKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Where a panel or dialog tells what happened: an alert with the API's message (and any
// field error that names no control here), each field's message next to its control
// (referenced by the control's aria-describedby), and a status line for successes.
export class Feedback {
  constructor() {
    this.slot = h("div", { class: "feedback" });
    this.statusLine = h("p", { role: "status", class: "status" });
    this.marked = [];
  }

  clear() {
    this.slot.replaceChildren();
    this.statusLine.textContent = "";
    for (const [control, message] of this.marked) {
      message.remove();
      const rest = (control.getAttribute("aria-describedby") || "")
        .split(" ")
        .filter((id) => id && id !== message.id);
      if (rest.length) control.setAttribute("aria-describedby", rest.join(" "));
      else control.removeAttribute("aria-describedby");
      control.removeAttribute("aria-invalid");
    }
    this.marked = [];
  }

  status(message) {
    this.statusLine.textContent = message;
  }

  // `controls`: field name (wire name or alias the client sent) → its control (an input,
  // a select, a textarea or a fieldset). `extra` goes after the message (e.g. a button).
  error(error, controls = {}, extra = null) {
    this.clear();
    const unplaced = [];
    for (const { field, message } of error.errors || []) {
      const control = controls[field];
      if (control) this.mark(control, message);
      else unplaced.push(field ? `${labelOf(null, field)}: ${message}` : message);
    }
    const alert = h(
      "div",
      { role: "alert", class: "error" },
      // `display`: the console's own wording of it (words.js explain), else the API's.
      h("p", {}, error.display || error.message),
      unplaced.length ? h("ul", {}, unplaced.map((text) => h("li", {}, text))) : null,
      extra,
    );
    this.slot.append(alert);
    // The keyboard goes to the first field to correct; else the message is brought in view.
    const first = this.marked.map(([control]) => control).find((c) => c.tagName !== "FIELDSET");
    if (first) first.focus();
    else alert.scrollIntoView({ block: "nearest" });
  }

  mark(control, text) {
    const earlier = this.marked.find(([marked]) => marked === control);
    if (earlier) {
      earlier[1].append(` ${text}`);
      return;
    }
    if (!control.id) control.id = uid("field");
    const message = h("p", { class: "field-error", id: `${control.id}-error` }, text);
    const holder = control.tagName === "FIELDSET" ? control : control.closest(".field") || control.parentElement;
    holder.append(message);
    const described = control.getAttribute("aria-describedby");
    control.setAttribute("aria-describedby", described ? `${described} ${message.id}` : message.id);
    control.setAttribute("aria-invalid", "true");
    this.marked.push([control, message]);
  }
}
