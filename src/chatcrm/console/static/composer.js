// The composer under a conversation (contract K.1, K.3): a "Message" box with "Send" while
// the 24-hour window is open — the contact's newest inbound message (conversation.js finds
// it) is less than 24 hours old — and, under "Send a template", a template (name, language, parameters; "Use template")
// at any time. The API's refusal (NO_CHANNEL, WINDOW_CLOSED, a field's message) shows
// beside it. Each body is sent with its own Idempotency-Key, the same for a repeat of it: a
// double click sends once.
import { h } from "./dom.js";
import { input, labelled, newKey, retriedUnderItsKey, uid } from "./forms.js";

const DAY = 24 * 60 * 60 * 1000;
export const WINDOW_CLOSED = "The 24-hour window is closed: send a template.";

// `feedback` shows the API's messages; `sent(message)` is told of each message queued.
export function composer(ctx, contactId, { feedback, sent }) {
  const path = `/api/contact/${encodeURIComponent(contactId)}/messages`;
  // No maxlength: the browser would cut a longer text without a word (and counts UTF-16
  // units, where the API's 4,096 are characters); the API's message says what is wrong.
  const text = h("textarea", { rows: 3, dir: "auto" });
  const send = h("button", { type: "submit" }, "Send");
  const reason = h("p", { id: uid("window"), class: "window-closed", hidden: true }, WINDOW_CLOSED);
  const textForm = h(
    "form",
    { class: "compose", "aria-label": "Composer", novalidate: true },
    labelled("Message", text),
    reason,
    h("div", { class: "buttons" }, send),
  );

  const name = input();
  const language = input({ value: "en_US" });
  const parameters = h("textarea", { rows: 2 });
  // Not "Send …": the contract's "Send" is the one button of that name (found by role
  // and name), also while the window is closed and this form is open.
  const sendTemplate = h("button", { type: "submit" }, "Use template");
  const templateForm = h(
    "form",
    { class: "compose-template", "aria-label": "Send a template", novalidate: true },
    labelled("Template name", name),
    labelled("Language", language),
    labelled("Parameters (one per line)", parameters),
    h("div", { class: "buttons" }, sendTemplate),
  );
  const templates = h("details", { class: "templates", "aria-label": "Send a template" }, h("summary", {}, "Send a template"), templateForm);
  const controls = {
    text,
    template: name,
    "template.name": name,
    "template.language": language,
    "template.parameters": parameters,
  };

  let lastInbound = null; // ms since the epoch, or null: none loaded
  let refusedFor; // the lastInbound the API said is outside the window (WINDOW_CLOSED)
  let wasOpen = null;
  let busy = false;
  let timer = null;

  // The window as the messages loaded show it; closes by itself when its 24 hours end.
  function showWindow() {
    clearTimeout(timer);
    const age = lastInbound === null ? Infinity : Date.now() - lastInbound;
    const open = age < DAY && !(refusedFor !== undefined && lastInbound <= refusedFor);
    text.disabled = !open;
    send.disabled = !open || busy;
    sendTemplate.disabled = busy;
    reason.hidden = open;
    // The reason is one description of the textbox; a field's message may be another.
    const others = (text.getAttribute("aria-describedby") || "").split(" ").filter((id) => id && id !== reason.id);
    const described = open ? others : [...others, reason.id];
    if (described.length) text.setAttribute("aria-describedby", described.join(" "));
    else text.removeAttribute("aria-describedby");
    if (!open && wasOpen !== false) templates.open = true; // the way left to write
    if (open && wasOpen === false) templates.open = false;
    wasOpen = open;
    // Looked at again when the window closes; at most once a day (a message dated in the
    // future would ask for more than a timer holds, 2^31 - 1 ms, and fire at once, again
    // and again).
    if (open) timer = setTimeout(showWindow, Math.min(DAY - age + 1000, DAY));
  }

  let attempt = { body: null, key: null };
  // `lines`: for a template, the line of "Parameters" each parameter came from (empty
  // lines are not sent), so that a refusal of `template.parameters[1]` is placed under
  // that box and names the line a person sees, not the wire's index.
  async function post(body, lines = null) {
    const written = JSON.stringify(body);
    if (written !== attempt.body) attempt = { body: written, key: newKey() };
    // The button pressed is disabled while the message is on its way, which takes the
    // keyboard from it: it gets it back after (unless it went elsewhere meanwhile).
    const pressed = document.activeElement;
    busy = true;
    showWindow();
    feedback.clear();
    try {
      const done = await ctx.call("POST", path, { body, headers: { "Idempotency-Key": attempt.key } });
      attempt = { body: null, key: null };
      sent(done.message);
      return true;
    } catch (error) {
      if (!retriedUnderItsKey(error)) attempt = { body: null, key: null };
      if (error.code === "WINDOW_CLOSED") refusedFor = lastInbound;
      if (lines) byLine(error, lines);
      feedback.error(error, controls);
      return false;
    } finally {
      busy = false;
      showWindow();
      const lost = !document.activeElement || document.activeElement === document.body;
      if (lost && pressed?.isConnected && !pressed.disabled) pressed.focus();
      else if (lost && !text.disabled) text.focus();
    }
  }

  textForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy || text.disabled) return;
    const sending = text.value;
    if (await post({ text: sending })) {
      // Emptied only if it still holds what was sent: what was typed meanwhile stays.
      if (text.value === sending) text.value = "";
      text.focus();
    }
  });
  // Enter writes a new line; Ctrl+Enter (⌘+Enter) sends.
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      textForm.requestSubmit();
    }
  });
  templateForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    const values = [];
    const lines = [];
    parameters.value.split("\n").forEach((line, index) => {
      if (!line.trim()) return;
      values.push(line.trim());
      lines.push(index + 1);
    });
    const template = { name: name.value.trim(), language: language.value.trim(), parameters: values };
    if (await post({ template }, lines)) parameters.value = "";
  });

  showWindow();
  return {
    element: h("div", { class: "composer" }, textForm, templates),
    // The contact's newest inbound message (its createdAt), or null: none.
    update(newestInbound) {
      const at = newestInbound ? Date.parse(newestInbound) : null;
      lastInbound = Number.isNaN(at) ? null : at;
      showWindow();
    },
    stop: () => clearTimeout(timer),
  };
}

// A refused parameter (`template.parameters[1]`) as the box's own refusal, naming its line.
function byLine(error, lines) {
  let first = null;
  error.errors = (error.errors || []).map(({ field, message }) => {
    const index = /^template\.parameters\[(\d+)\]$/.exec(field || "");
    if (!index) return { field, message };
    const said = `line ${lines[Number(index[1])] ?? Number(index[1]) + 1}: ${message}`;
    first ??= said;
    return { field: "template.parameters", message: said };
  });
  if (first) error.display = `Parameters (one per line), ${first}.`;
}
