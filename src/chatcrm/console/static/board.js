// The contacts and opportunities boards (contract H), read from the board endpoint: a
// <section> per stage, in stage order, named by the stage and headed by its count (and,
// for opportunities, the total amount); 50 cards per column with "Load more"; a search
// box; cards dragged between and within columns are saved with If-Match; the events feed
// (live.js) brings changes made elsewhere.
import { ApiError } from "./api.js";
import { addMoney, card, money } from "./cards.js";
import { h } from "./dom.js";
import { placement } from "./moves.js";
import { writes } from "./session.js";

const PAGE = 50;
const SEARCH_DELAY = 250; // ms of quiet typing before the board is searched
const LIVE_DELAY = 100; // ms to gather the events of one burst into one reload
const RELOAD_RETRY = 2000; // ms before a failed reload is tried again
const KINDS = {
  contact: { noun: "contacts", title: "Contacts board", written: "contact" },
  // The update's answer spells it with one p, as the original service does.
  opportunity: { noun: "opportunities", title: "Opportunities board", written: "oportunity" },
};

// What the search box holds, per kind: it outlives the board's re-renders, not the
// workspace (resetFilters, on sign-out and on opening a workspace).
const searches = { contact: "", opportunity: "" };
// "Mine" (contract K.3): only what is assigned to the signed-in person's agent here.
const mine = { contact: false, opportunity: false };

export function resetFilters() {
  for (const kind of Object.keys(searches)) {
    searches[kind] = "";
    mine[kind] = false;
  }
}
// The board on screen, so that its successor can unsubscribe it from the events feed.
let active = null;
class Board {
  constructor(ctx, kind) {
    this.ctx = ctx;
    this.kind = kind;
    this.noun = KINDS[kind].noun;
    this.cards = new Map(); // id → {record, etag, element}
    this.columns = new Map(); // stage id → {name, count, total, next, section, list, ...}
    this.loads = 0; // the latest load wins
    this.saving = 0; // moves being saved: reloads wait for them
    this.waiting = null; // events that arrived while saving
    this.dragged = null;
    this.movable = writes(ctx.session, kind); // a read-only caller's cards stay put
    this.marker = h("div", { class: "drop-marker", "aria-hidden": "true" });
    this.alert = h("p", { role: "alert", class: "error", hidden: true });
    this.region = h("div", { class: "board", role: "region", "aria-label": KINDS[kind].title });
    this.search = h("input", { id: `search-${kind}`, type: "search", autocomplete: "off" });
    this.search.value = searches[kind];
    this.myAgent = myAgent(ctx);
    this.mine = h("input", { id: `mine-${kind}`, type: "checkbox" });
    this.mine.checked = mine[kind] && Boolean(this.myAgent);
    this.mine.addEventListener("change", () => {
      mine[kind] = this.mine.checked;
      this.reload();
    });
    // Why "Mine" cannot be ticked, said to a screen reader as well (a title alone is not).
    const why = this.myAgent ? null : "No agent of this workspace has your e-mail";
    const whyId = `${this.mine.id}-why`;
    const mineControl = ctx.session.user
      ? h(
          "span",
          { class: "mine", title: why },
          this.mine,
          h("label", { for: this.mine.id }, "Mine"),
          why ? h("span", { id: whyId, hidden: true }, why) : null,
        )
      : null;
    if (!this.myAgent) {
      this.mine.disabled = true;
      this.mine.setAttribute("aria-describedby", whyId);
    }
    this.element = h(
      "div",
      { class: "board-view" },
      h(
        "form",
        { class: "board-search", role: "search", onsubmit: (event) => this.submitSearch(event) },
        h("label", { for: this.search.id }, "Search"),
        this.search,
        mineControl,
      ),
      this.alert,
      this.region,
    );
    this.search.addEventListener("input", () => this.typed());
    this.listener = (events, swept) => (swept ? this.sweep() : this.heard(events));
  }

  query(extra = {}) {
    const assigned = mine[this.kind] && this.myAgent ? { assignedAgentId: this.myAgent } : {};
    return { q: searches[this.kind], pageSize: PAGE, ...assigned, ...extra };
  }

  fetchBoard(extra) {
    return this.ctx.call("GET", `/api/${this.kind}/board`, { query: this.query(extra) });
  }

  // The whole board again (a search, the events feed): columns as the server answers
  // them, as many cards per column as were shown, scrolled as they were, the focused card
  // still focused.
  async reload() {
    const turn = ++this.loads;
    const shown = new Map([...this.columns].map(([id, column]) => [id, column.list.children.length]));
    const scrolled = new Map([...this.columns].map(([id, column]) => [id, column.list.scrollTop]));
    // A reload that overtakes one still bringing its pages back (a save, then the feed's
    // event of it) keeps what that one was to restore, not the first pages it drew so far.
    for (const [id, count] of this.restoring?.shown || []) shown.set(id, Math.max(count, shown.get(id) || 0));
    for (const [id, top] of this.restoring?.scrolled || []) scrolled.set(id, Math.max(top, scrolled.get(id) || 0));
    const before = this.restoring?.focused;
    this.restoring = { shown, scrolled, focused: document.activeElement?.closest?.(".card")?.dataset.id ?? before };
    let data;
    try {
      data = await this.fetchBoard();
    } catch (error) {
      if (turn !== this.loads) return;
      this.failed(error);
      // Tried again: the feed has passed the events that asked for it, and nothing else
      // would bring their changes in (a 503 of a moment left the board stale).
      this.reloadFailed = true;
      clearTimeout(this.retry);
      if (!(error instanceof ApiError && error.status === 401)) {
        this.retry = setTimeout(() => this.region.isConnected && this.reload(), RELOAD_RETRY);
      }
      return;
    }
    if (turn !== this.loads || !this.region.isConnected) return;
    if (this.reloadFailed) {
      this.reloadFailed = false;
      this.alert.hidden = true; // that failure's message is no longer true
    }
    const here = document.activeElement?.closest?.(".card")?.dataset.id;
    const focused = here ?? this.restoring.focused;
    // A column's "Load more" keeps the focus too (a keyboard user's place on the board).
    const more = document.activeElement?.classList?.contains("more")
      ? document.activeElement.closest(".column")?.dataset.stage
      : null;
    this.render(data);
    if (here) this.cards.get(here)?.element.focus();
    if (more) this.columns.get(more)?.more.focus();
    for (const [id, count] of shown) {
      const column = this.columns.get(id);
      while (column && column.next && column.list.children.length < count && turn === this.loads) {
        if (!(await this.loadMore(column))) break;
      }
      if (column && turn === this.loads) column.list.scrollTop = scrolled.get(id);
    }
    // A focused card beyond the first page is back once its page is: the focus too, unless
    // it went somewhere meanwhile.
    if (turn !== this.loads) return;
    this.restoring = null;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (focused && lost) this.cards.get(focused)?.element.focus();
  }

  render(data) {
    this.cards.clear();
    this.columns.clear();
    this.region.replaceChildren(...data.columns.map((column) => this.column(column)));
  }

  column(answer) {
    const heading = `stage-${this.kind}-${answer.stageId}`;
    const column = {
      stageId: answer.stageId,
      name: answer.name,
      count: answer.count,
      total: answer.totalAmount ?? null,
      next: answer.next,
      list: h("div", { class: "cards" }),
      countElement: h("p", { class: "count" }),
      totalElement: this.kind === "opportunity" ? h("p", { class: "total" }) : null,
      more: h("button", { type: "button", class: "more" }, "Load more"),
    };
    column.more.addEventListener("click", () => this.loadMore(column));
    column.section = h(
      "section",
      { class: "column", "aria-labelledby": heading, "data-stage": answer.stageId },
      h("div", { class: "column-head" }, h("h3", { id: heading }, answer.name), column.countElement, column.totalElement),
      column.list,
      column.more,
    );
    for (const event of ["dragenter", "dragover"]) column.section.addEventListener(event, (e) => this.over(e, column));
    column.section.addEventListener("dragleave", (e) => this.left(e, column));
    column.section.addEventListener("drop", (e) => this.dropped(e, column));
    this.columns.set(answer.stageId, column);
    this.addCards(column, answer.cards);
    this.showCounts(column);
    return column.section;
  }

  addCards(column, cards) {
    for (const { etag, record, contactName } of cards) {
      const entry = { record, etag, element: null };
      const open = () => this.ctx.openPanel(this.kind, record.id);
      entry.element = card(this.kind, record, open, contactName, this.movable);
      entry.element.addEventListener("dragstart", (event) => this.started(event, entry));
      entry.element.addEventListener("dragend", () => this.ended());
      this.cards.set(record.id, entry);
      column.list.append(entry.element);
    }
    column.more.hidden = !column.next;
  }

  showCounts(column) {
    column.countElement.textContent = String(column.count);
    column.countElement.setAttribute("aria-label", `${column.count} ${this.noun}`);
    if (column.totalElement) {
      column.totalElement.textContent = money(column.total);
      column.totalElement.setAttribute("aria-label", `Total ${money(column.total)}`);
    }
  }

  // One page at a time. The button is held with aria-disabled, not disabled, so that the
  // keyboard stays on it (Enter again loads the next page); when no page is left it goes,
  // and the keyboard goes to the first card it brought.
  async loadMore(column) {
    if (column.loading) return false;
    column.loading = true;
    column.more.setAttribute("aria-disabled", "true");
    const before = column.list.children.length;
    try {
      const data = await this.fetchBoard({ stageId: column.stageId, after: column.next });
      const answer = data.columns[0];
      column.next = answer.next;
      const focused = document.activeElement === column.more;
      this.addCards(column, answer.cards.filter((c) => !this.cards.has(c.record.id)));
      if (focused && column.more.hidden) column.list.children[before]?.focus();
      return true;
    } catch (error) {
      this.failed(error);
      return false;
    } finally {
      column.loading = false;
      column.more.removeAttribute("aria-disabled");
    }
  }

  typed() {
    clearTimeout(this.typing);
    this.typing = setTimeout(() => this.searchNow(), SEARCH_DELAY);
  }

  submitSearch(event) {
    event.preventDefault();
    clearTimeout(this.typing);
    this.searchNow();
  }

  searchNow() {
    if (!this.region.isConnected || searches[this.kind] === this.search.value.trim()) return;
    searches[this.kind] = this.search.value.trim();
    this.columns.clear(); // a new search starts each column at its first page
    this.restoring = null;
    this.reload();
  }

  failed(error) {
    if (error instanceof ApiError && error.status === 401) return this.ctx.redraw(); // to the sign-in
    // A drop on a card someone else had just changed: the card goes back, and the board
    // shows their change as the feed brings it; the API's own message follows ours.
    const what = this.kind === "opportunity" ? "opportunity" : "contact";
    this.alert.textContent =
      error instanceof ApiError && error.status === 412
        ? `Someone else changed this ${what} just before — it is back where it was, with their change. (${error.message})`
        : error.message;
    this.alert.hidden = false;
  }

  // The dropped card was saved, but a card it pushes down was not (changed elsewhere just
  // before, or the server out of reach): said, and the board read again in place, so
  // that the message stays.
  pushFailed(error) {
    if (error instanceof ApiError && error.status === 401) return this.ctx.redraw();
    const what = this.kind === "opportunity" ? "opportunity" : "contact";
    this.alert.textContent =
      `The ${what} is saved at its new place, but a card below it could not be moved down ` +
      `(${error.message}); the board is shown as the server has it.`;
    this.alert.hidden = false;
    this.reload();
  }

  // A page of the events feed: reload when it names a card of this kind that the board
  // does not show at that version or a later one (a change made here is already shown).
  heard(events) {
    if (!this.region.isConnected) return;
    if (this.saving || this.dragged) {
      // After the drop is saved: the board it answers may not know of the move yet.
      this.waiting = [...(this.waiting || []), ...events];
      return;
    }
    const family = `${this.kind}.`;
    const news = events.some((event) => {
      if (this.kind === "opportunity" && this.namesContact(event)) return true;
      if (!event.type.startsWith(family)) return false;
      const shown = this.cards.get(event.recordId);
      // An ETag names the record's version ("4"), as the event's recordVersion does.
      return !shown || !(Number(shown.etag.replaceAll('"', "")) >= event.recordVersion);
    });
    if (!news) return;
    clearTimeout(this.pending);
    this.pending = setTimeout(() => this.reload(), LIVE_DELAY);
  }

  // A sweep (live.js): the board again when its first pages or counts are not the ones
  // shown (a card hidden from this agent with no event it may read, or any change missed).
  async sweep() {
    if (!this.region.isConnected || this.saving || this.dragged) return;
    const turn = this.loads;
    let data;
    try {
      data = await this.fetchBoard();
    } catch {
      return; // the feed's next page or sweep tries again
    }
    if (turn !== this.loads || !this.region.isConnected || this.saving || this.dragged) return;
    if (this.differs(data)) this.reload();
  }

  differs(data) {
    if (data.columns.length !== this.columns.size) return true;
    return data.columns.some((answer) => {
      const column = this.columns.get(answer.stageId);
      if (!column || column.count !== answer.count) return true;
      const shown = [...column.list.children].filter((e) => e.classList.contains("card"));
      return answer.cards.some(({ record, etag }, i) => {
        return shown[i]?.dataset.id !== record.id || this.cards.get(record.id)?.etag !== etag;
      });
    });
  }

  // A contact renamed, deleted or merged elsewhere that an opportunity card names.
  namesContact(event) {
    if (!event.type.startsWith("contact.") || event.type.startsWith("contact.activity.")) return false;
    for (const entry of this.cards.values()) if (entry.record.contactId === event.recordId) return true;
    return false;
  }

  // Drag and drop: HTML5 drag events; a marker shows where the card would land.
  started(event, entry) {
    if (!this.movable) return event.preventDefault();
    this.dragged = entry;
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", entry.record.id);
    entry.element.classList.add("dragging");
  }

  ended() {
    this.dragged?.element.classList.remove("dragging");
    this.dragged = null;
    this.marker.remove();
    this.flush();
  }

  // The events heard while a card was dragged or saved.
  flush() {
    if (this.saving || this.dragged || !this.waiting) return;
    const events = this.waiting;
    this.waiting = null;
    this.heard(events);
  }

  // The shown card a drop at this height lands before (null: the end of the column).
  landing(column, y) {
    for (const element of column.list.children) {
      if (!element.classList.contains("card") || element === this.dragged.element) continue;
      const box = element.getBoundingClientRect();
      if (y < box.top + box.height / 2) return element;
    }
    return null;
  }

  over(event, column) {
    if (!this.dragged) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    const before = this.landing(column, event.clientY);
    if (this.marker.parentNode !== column.list || this.marker.nextSibling !== before) {
      column.list.insertBefore(this.marker, before);
    }
  }

  left(event, column) {
    if (!column.section.contains(event.relatedTarget)) this.marker.remove();
  }

  dropped(event, column) {
    if (!this.dragged) return;
    event.preventDefault();
    const entry = this.dragged;
    const before = this.landing(column, event.clientY);
    entry.element.classList.remove("dragging");
    this.dragged = null;
    this.marker.remove();
    this.move(entry, column, before); // counts as saving from here on
  }

  // Show the card at its new place at once; save it, then the cards it pushes down. The
  // card goes first: if it fails (a 412: changed elsewhere), it goes back where it was and
  // nothing else has changed. Positions may repeat for a moment (the server allows it).
  async move(entry, column, before) {
    const element = entry.element;
    const from = this.columns.get(entry.record.stageId);
    const home = { list: element.parentNode, next: element.nextSibling };
    const others = [...column.list.children].filter((e) => e.classList.contains("card") && e !== element);
    const index = before ? others.indexOf(before) : others.length;
    if (from === column && others[index] === nextCard(element)) return; // where it was
    const neighbours = others.map((e) => this.cards.get(e.dataset.id));
    const plan = placement(
      neighbours.map((n) => n.record.orderInCards),
      index,
    );
    column.list.insertBefore(element, before);
    this.alert.hidden = true;
    this.saving += 1;
    let saved = false;
    try {
      await this.save(entry, { stageId: column.stageId, orderInCards: plan.order });
      saved = true;
      // A column counts its open opportunities only (won and lost ones stay on the
      // board with their badge), as the server counts them.
      const counted = this.kind !== "opportunity" || Number(entry.record.winLossStatus ?? 0) === 0;
      if (from && from !== column && counted) {
        from.count -= 1;
        column.count += 1;
        if (this.kind === "opportunity") {
          from.total = addMoney(from.total, entry.record.amount, -1);
          column.total = addMoney(column.total, entry.record.amount);
        }
        this.showCounts(from);
        this.showCounts(column);
      }
      for (const shift of plan.shifts) await this.save(neighbours[shift.index], { orderInCards: shift.order });
      element.focus();
    } catch (error) {
      if (saved) {
        this.pushFailed(error);
      } else {
        home.list.insertBefore(element, home.next?.parentNode === home.list ? home.next : null);
        this.failed(error);
      }
    } finally {
      this.saving -= 1;
      this.flush();
    }
  }

  async save(entry, body) {
    const { data, etag } = await this.ctx.call("PUT", `/api/${this.kind}`, {
      query: { id: entry.record.id, workspaceId: this.ctx.session.workspace },
      body,
      headers: { "If-Match": entry.etag },
      withEtag: true,
    });
    entry.etag = etag;
    entry.record = data[KINDS[this.kind].written] || { ...entry.record, ...body };
  }
}

function nextCard(element) {
  let next = element.nextElementSibling;
  while (next && !next.classList.contains("card")) next = next.nextElementSibling;
  return next || undefined;
}

// The board on screen read again in place, keeping the cards loaded with "Load more", its
// scroll and its focus (a save in a panel, a drop that half failed); null when the view is
// not this workspace's board.
export function reloadBoard(ctx) {
  if (!active || active.ctx !== ctx || !active.region.isConnected) return null;
  return active.reload();
}

export async function board(ctx, kind) {
  const view = new Board(ctx, kind);
  view.render(await view.fetchBoard());
  if (active) active.ctx.listeners.delete(active.listener);
  active = view;
  ctx.listeners.add(view.listener);
  return view.element;
}

// The agent that stands for the signed-in person in this workspace (linked by e-mail).
function myAgent(ctx) {
  const user = ctx.session.user;
  if (!user) return null;
  const ids = new Set(user.agentIds || []);
  const agent = (ctx.workspace.agents || []).find((a) => ids.has(a.id));
  return agent ? agent.id : null;
}
