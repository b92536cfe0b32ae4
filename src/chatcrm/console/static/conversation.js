// A contact's conversation (contract K.1, K.3), in its panel: the messages oldest to newest,
// inbound and outbound told apart, each with its time and (outbound) its status — a failed
// one with the error's title and "Retry"; media by type with a link to its bytes; the page
// of older messages loaded on scrolling up; new messages and status changes brought by the
// events feed; and the composer (composer.js) below.
import { apiUrl, bytes, passing } from "./api.js";
import { composer } from "./composer.js";
import { h } from "./dom.js";
import { Feedback, time } from "./forms.js";
import { allows } from "./session.js";

const PAGE = 30;
// Older pages read, not shown, for the newest inbound message (lookBack): the 24-hour
// window's start. 50 pages of 100 reach back past 5,000 messages sent in a day with no
// answer; beyond them the window shows closed, and a template still goes.
const LOOK_PAGE = 100;
const LOOK_PAGES = 50;
const DAY = 24 * 60 * 60 * 1000;
const NEAR_TOP = 48; // px from the list's top at which the older page is asked for
const FIRST_PAGE_RETRY = 2000; // ms before a first page that failed (and may pass) is read again
const NEAR_END = 64; // px from its end within which the list follows new messages
const READ_DELAY = 300; // ms: one "read" for a burst of inbound messages

const SHORT = { dateStyle: "short", timeStyle: "short" };
const STATUS = { queued: "Queued", sent: "Sent", delivered: "Delivered", read: "Read" };
const KINDS = {
  image: "Image",
  audio: "Audio",
  video: "Video",
  document: "Document",
  sticker: "Sticker",
  location: "Location",
  interactive: "Interactive reply",
  button: "Button reply",
  template: "Template",
  reaction: "Reaction",
  unsupported: "Unsupported message",
};

// What a media may open as in a tab, where it is a blob of the console's own origin: the
// pictures, sound and video that the server itself shows inline (messages/router.py). Any
// other bytes — a customer's HTML page or SVG, even sent as an "image" — are downloaded:
// opened here they would run, or send the reader's tab elsewhere, with neither the server's
// `attachment` nor its sandbox policy, which a blob does not keep.
const SHOWN = /^(?:image\/(?:jpeg|png|gif|webp)|(?:audio|video)\/[a-z0-9][a-z0-9!#$&^_.+-]*)$/;

// The type a media opens in a tab as: its own, when the server answered it `inline` and it
// is one of SHOWN; else null, and it is downloaded.
function shownAs(headers) {
  const essence = (name) => (headers.get(name) || "").split(";")[0].trim().toLowerCase();
  const type = essence("Content-Type");
  return essence("Content-Disposition") === "inline" && SHOWN.test(type) ? type : null;
}

const at = (iso) => Date.parse(iso) || 0;

// A timestamp as [its whole seconds in ms, its fraction's digits padded to nine], to compare
// exactly: the API writes microseconds (`…09:00:00.000300Z`), which Date.parse cuts to
// milliseconds, and the several messages of one delivery are recorded 1 µs apart.
function instant(iso) {
  const text = String(iso || "");
  const parts = /^(.*T\d\d:\d\d:\d\d)(?:[.,](\d+))?(.*)$/.exec(text);
  if (!parts) return [at(text), ""];
  const [, whole, fraction = "", zone] = parts;
  return [at(whole + zone), fraction.padEnd(9, "0").slice(0, 9)];
}

function byTime(a, b) {
  const [[secondsA, fractionA], [secondsB, fractionB]] = [instant(a), instant(b)];
  return secondsA - secondsB || (fractionA < fractionB ? -1 : fractionA > fractionB ? 1 : 0);
}

// Oldest first, as the API orders a conversation (messages/repository.py: createdAt, then
// id); the id settles a tie (ids grow with time).
function compare(a, b) {
  return byTime(a.createdAt, b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// How far a sent message has gone; `failed` is outside the line (a retry queues it again).
const PROGRESS = { queued: 0, sent: 1, delivered: 2, read: 3 };

// Whether `next` is the same message at a later state than the one shown (statuses only
// move on, and a retry's `queued` is newer than the `failed` before it). Along the line
// the status itself decides: Meta dates statuses in whole seconds, so a send's answer
// (`queued`, dated to the microsecond) that arrives after the events said `read` looks
// newer by its time.
function later(next, shown) {
  const [from, to] = [PROGRESS[shown.status], PROGRESS[next.status]];
  if (from !== undefined && to !== undefined && from !== to) return to > from;
  const order = byTime(next.statusAt || next.createdAt, shown.statusAt || shown.createdAt);
  return order > 0 || (order === 0 && (next.status !== shown.status || next.externalId !== shown.externalId));
}

// The conversation is read (K.1): the contact's isRead becomes true.
export function markRead(ctx, contactId) {
  return ctx.call("POST", `/api/contact/${encodeURIComponent(contactId)}/messages/read`, { body: {} });
}

class Conversation {
  constructor(ctx, contactId) {
    this.ctx = ctx;
    this.id = contactId;
    this.path = `/api/contact/${encodeURIComponent(contactId)}/messages`;
    this.items = new Map(); // message id → {message, element}
    this.versions = new Map(); // message id → the latest event's recordVersion applied
    this.before = null; // the id to ask the older page with, or null: none older
    this.inboundBeyond = null; // the newest inbound message older than those shown
    this.loadingOlder = false;
    this.canWrite = allows(ctx.session, "messages:write");
    this.feedback = new Feedback();
    // Named "Conversation", its items by direction and time: the composer's textbox is then
    // the one element of the panel whose name holds "Message" (found by label, as K.3 says).
    this.list = h("ol", { class: "messages", role: "log", "aria-label": "Conversation", tabindex: 0 });
    this.note = h("p", { class: "muted" }, "Loading…");
    this.older = h("button", { type: "button", class: "older", hidden: true }, "Load older messages");
    this.older.addEventListener("click", () => this.loadOlder());
    this.list.addEventListener("scroll", () => {
      if (this.list.scrollTop <= NEAR_TOP) this.loadOlder();
    });
    this.composer = this.canWrite
      ? composer(ctx, contactId, { feedback: this.feedback, sent: (m) => this.put(m, { follow: true }) })
      : null;
    this.element = h(
      "div",
      { class: "conversation" },
      this.feedback.slot,
      this.older,
      this.note,
      this.list,
      this.composer ? this.composer.element : null,
    );
    this.listener = (events) => this.heard(events);
  }

  async start() {
    this.ctx.listeners.add(this.listener); // before the first page: nothing falls between
    await this.firstPage();
  }

  // The newest page. A failure that may pass (the server out of reach a moment) is shown
  // and the page read again 2 s later: the messages heard meanwhile stay, and those before
  // them come with it.
  async firstPage() {
    try {
      const page = await this.ctx.call("GET", this.path, { query: { pageSize: PAGE } });
      if (this.stopped) return;
      for (const message of page.messages) this.put(message);
      this.before = page.before;
      this.older.hidden = !this.before;
      this.toEnd();
    } catch (error) {
      if (this.stopped) return;
      this.note.hidden = false;
      this.note.replaceChildren(h("span", { role: "alert", class: "error" }, error.message));
      if (passing(error)) this.retry = setTimeout(() => this.firstPage(), FIRST_PAGE_RETRY);
      return;
    }
    this.changed();
    await this.lookBack();
  }

  // The composer's window opens at the contact's newest inbound message, which may be older
  // than the pages shown (a bot's answers since): older pages are read until one is found,
  // the messages read reach 24 hours back, or none are left.
  async lookBack() {
    const inbound = (messages) => messages.filter((m) => m.direction === "in");
    if (!this.composer || inbound([...this.items.values()].map((i) => i.message)).length) return;
    let before = this.before;
    try {
      for (let n = 0; before && n < LOOK_PAGES; n += 1) {
        const page = await this.ctx.call("GET", this.path, { query: { before, pageSize: LOOK_PAGE } });
        const found = inbound(page.messages);
        if (found.length) {
          this.inboundBeyond = found[found.length - 1];
          this.changed();
          return;
        }
        if (!page.messages.length || Date.now() - at(page.messages[0].createdAt) >= DAY) return;
        before = page.before;
      }
    } catch {
      // the window stays as the pages shown have it; the API's WINDOW_CLOSED corrects it
    }
  }

  stop() {
    this.stopped = true;
    this.ctx.listeners.delete(this.listener);
    clearTimeout(this.reading);
    clearTimeout(this.retry);
    if (this.composer) this.composer.stop();
  }

  // The page before the oldest shown, kept where the reader was.
  async loadOlder() {
    if (!this.before || this.loadingOlder) return;
    this.loadingOlder = true;
    // Held by aria-disabled, not disabled: a focused button keeps the keyboard (Enter again
    // loads the next page), as the board's "Load more" does.
    const pressed = document.activeElement === this.older;
    this.older.setAttribute("aria-disabled", "true");
    const fromEnd = this.list.scrollHeight - this.list.scrollTop;
    try {
      const page = await this.ctx.call("GET", this.path, { query: { before: this.before, pageSize: PAGE } });
      for (const message of page.messages) this.put(message);
      this.before = page.before;
      this.list.scrollTop = this.list.scrollHeight - fromEnd;
      this.changed();
    } catch (error) {
      this.feedback.error(error);
    } finally {
      this.loadingOlder = false;
      this.older.removeAttribute("aria-disabled");
      this.older.hidden = !this.before;
      // No page left: the button goes, and the keyboard to the conversation it brought.
      if (pressed && this.older.hidden) this.list.focus();
    }
  }

  nearEnd() {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight <= NEAR_END;
  }

  toEnd() {
    this.list.scrollTop = this.list.scrollHeight;
  }

  // A message shown, or shown again at a later state; in its place by time. `ordered`: it
  // comes from an event already found newer by its recordVersion, the order that holds —
  // Meta dates a status in whole seconds, so a `delivered` may carry an earlier time than
  // the `sent` recorded a moment before it.
  put(message, { follow = false, ordered = false } = {}) {
    const known = this.items.get(message.id);
    if (known) {
      if (!ordered && !later(message, known.message)) return;
      const element = this.item(message);
      known.element.replaceWith(element);
      Object.assign(known, { message, element });
    } else {
      const following = follow || this.nearEnd();
      const element = this.item(message);
      let next = null; // the first shown message after this one
      for (let child = this.list.lastElementChild; child; child = child.previousElementSibling) {
        if (compare(this.items.get(child.dataset.id).message, message) <= 0) break;
        next = child;
      }
      this.items.set(message.id, { message, element });
      this.list.insertBefore(element, next);
      if (following && !next) this.toEnd();
    }
    this.changed();
  }

  // What depends on the whole list: the empty note and the composer's 24-hour window.
  changed() {
    this.note.hidden = this.items.size > 0;
    if (!this.items.size) this.note.textContent = "No messages yet.";
    let newest = null;
    for (const { message } of this.items.values()) {
      if (message.direction === "in" && (!newest || compare(newest, message) < 0)) newest = message;
    }
    newest ??= this.inboundBeyond;
    if (this.composer) this.composer.update(newest ? newest.createdAt : null);
  }

  // A page of the events feed: this contact's new messages and status changes.
  heard(events) {
    let inbound = false;
    for (const event of events) {
      if (!event.type.startsWith("message.") || !event.data || event.data.contactId !== this.id) continue;
      if (event.recordVersion <= (this.versions.get(event.recordId) || 0)) continue;
      this.versions.set(event.recordId, event.recordVersion);
      if (!this.items.has(event.data.id) && event.data.direction === "in") inbound = true;
      this.put(event.data, { ordered: true });
    }
    // Seen as it arrives: the conversation stays read while it is open in view.
    if (inbound && this.canWrite && document.visibilityState === "visible") {
      clearTimeout(this.reading);
      this.reading = setTimeout(() => markRead(this.ctx, this.id).catch(() => {}), READ_DELAY);
    }
  }

  // A list item named by its direction and time ("Received 5/3/25, 10:42 AM", "Sent …"):
  // what a person tells messages apart by.
  item(message) {
    const inbound = message.direction === "in";
    const when = time(message.createdAt, SHORT);
    return h(
      "li",
      {
        class: `message ${inbound ? "in" : "out"}`,
        "data-id": message.id,
        "aria-label": `${inbound ? "Received" : "Sent"} ${when.textContent}`,
      },
      this.content(message),
      h("p", { class: "meta" }, when, inbound ? null : this.status(message)),
    );
  }

  content(message) {
    const kind = message.type !== "text" ? KINDS[message.type] || message.type : null;
    const media = message.media;
    const place = message.location;
    return [
      kind ? h("p", { class: "kind" }, kind) : null,
      media ? this.mediaLink(message) : null,
      place
        ? h(
            "p",
            { class: "location" },
            [place.name, place.address].filter(Boolean).join(", "),
            ` (${place.latitude}, ${place.longitude})`,
          )
        : null,
      message.text ? h("p", { class: "text", dir: "auto" }, message.text) : null,
    ];
  }

  // The media's bytes come through the API (GET /api/message/{id}/media) with the caller's
  // credentials, then a picture, sound or video opens in a new tab (shownAs); anything else
  // is downloaded, under its file name or "<kind>-<message id>".
  mediaLink(message) {
    const path = `/api/message/${encodeURIComponent(message.id)}/media`;
    const kind = (KINDS[message.type] || "media").toLowerCase();
    const { fileName, mimeType } = message.media;
    const open = async (event) => {
      event.preventDefault();
      try {
        const { blob, headers } = await bytes(this.ctx.session, path);
        const shown = shownAs(headers);
        // A blob of the checked type, or of none (octet-stream) for a download: whatever the
        // bytes are, this origin never holds them as a page.
        const url = URL.createObjectURL(new Blob([blob], { type: shown || "application/octet-stream" }));
        const link = shown
          ? h("a", { href: url, target: "_blank", rel: "noopener" })
          : h("a", { href: url, download: fileName || `${kind}-${message.id}` });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      } catch (error) {
        this.feedback.error(error);
      }
    };
    return h(
      "p",
      { class: `media ${message.type}` },
      // The link itself serves a person's session too (opened in a new tab, say).
      h("a", { href: apiUrl(`${path}?workspaceId=${encodeURIComponent(this.ctx.session.workspace)}`),
        class: "media-link", onclick: open }, `Open ${kind}`),
      fileName || mimeType ? h("span", { class: "file" }, ` ${fileName || mimeType}`) : null,
    );
  }

  status(message) {
    if (message.status !== "failed") {
      return h("span", { class: `delivery ${message.status}` }, STATUS[message.status] || message.status);
    }
    const error = message.error || {};
    const retry = this.canWrite
      ? h("button", { type: "button", class: "retry", onclick: (e) => this.retry(message, e.currentTarget) }, "Retry")
      : null;
    return [
      h("span", { class: "delivery failed" }, `Failed: ${error.title || error.code || "unknown error"}`),
      retry,
    ];
  }

  // A failed message queued again (POST /api/message/{id}/retry): the same message.
  async retry(message, button) {
    button.disabled = true;
    this.feedback.clear();
    try {
      const done = await this.ctx.call("POST", `/api/message/${encodeURIComponent(message.id)}/retry`, {
        body: {},
      });
      this.put(done.message);
    } catch (error) {
      button.disabled = false;
      this.feedback.error(error);
    }
  }
}

// The conversation of a contact: `element` to show, `start()` once shown, `stop()` on close.
export function conversation(ctx, contactId) {
  return new Conversation(ctx, contactId);
}
