// What the contact and opportunity panels share: reading and updating a record with its
// ETag, the edited fields, one action at a time with its errors shown, sections and lists,
// the history and the list of every field.
import { ApiError } from "./api.js";
import { money } from "./cards.js";
import { h } from "./dom.js";
import { time, uid } from "./forms.js";
import { actorWords, formatPhone, historyLine, labelOf } from "./words.js";

// A record by id (`data.data[0]`) with its ETag, the version an update names in If-Match.
export async function readRecord(ctx, path, query) {
  const { data, etag } = await ctx.call("GET", path, { query, withEtag: true });
  const record = data.data[0];
  // A stage, agent, segmentation or tag added since the workspace was read (elsewhere):
  // the workspace is read again, so that the panel's selects offer it.
  if (namesUnknown(ctx.workspace, record) && ctx.readWorkspace) await ctx.readWorkspace();
  return { record, etag };
}

function namesUnknown(workspace, record) {
  const has = (list, id) => !id || (list || []).some((item) => item.id === id);
  const stages = [...(workspace.contactStages || []), ...(workspace.opportunityStages || [])];
  return (
    !has(stages, record.stageId) ||
    !has(workspace.agents, record.assignedAgentId) ||
    !has(workspace.segmentations, record.segmentationId) ||
    (record.tags || []).some((tag) => !has(workspace.tags, tag.id))
  );
}

const UPDATES = {
  contact: (ctx, id) => ({ path: "/api/contact", query: { id, workspaceId: ctx.session.workspace }, key: "contact" }),
  // The key is spelled with one p in the contract (A.1).
  opportunity: (ctx, id) => ({ path: "/api/opportunity", query: { id }, key: "oportunity" }),
};

// One update in the newer form (every key a field), against the version read.
export async function updateRecord(ctx, kind, state, changes) {
  const { path, query, key } = UPDATES[kind](ctx, state.record.id);
  const headers = state.etag ? { "If-Match": state.etag } : {};
  const { data, etag } = await ctx.call("PUT", path, { query, body: changes, headers, withEtag: true });
  return { record: data[key], etag };
}

const versionOf = (etag) => Number(String(etag || "").replaceAll('"', "")) || 0;
const FOLLOW_DELAY = 100; // ms to gather one burst of events into one read

// Changes made elsewhere (another tab, a bot, a message) come into an open panel within
// a moment (contract H), by the events feed the console follows: `read` reads the record
// and `take` merges it, keeping what the person edited. Once a change to a field the
// person is editing is seen — in an event, or in a record read for an earlier event (the
// read may already hold a later change) — nothing more is taken in: Save then meets the
// other version (412) and offers "Reload", so nobody's change is overwritten unseen.
// Returns the function that stops following.
// `activities`: {type, show} of the record's activity events; `gone`: what to do when a
// sweep (an assigned-only agent's, live.js) finds the record hidden from the caller now.
// `deleted`: called when the record is deleted elsewhere (its `<kind>.deleted` event).
export function followChanges(
  ctx,
  types,
  state,
  editor,
  read,
  take,
  { activities = null, gone = null, deleted = null, on = {} } = {},
) {
  let pending = null;
  let staleAt = null; // the version the panel had when an edited field changed elsewhere
  const follow = (events, swept) => {
    if (swept) {
      // No event says a record left an agent's sight: it is read again, and a 404 closes it.
      if (gone) read().catch((error) => error instanceof ApiError && error.status === 404 && gone());
      return;
    }
    if (deleted && events.some((e) => e.type === deleted.type && e.recordId === state.record.id)) {
      deleted.show();
    }
    // Other events of the record with something of their own to show (`on`: type → what).
    for (const [type, show] of Object.entries(on)) {
      if (events.some((e) => e.type === type && e.recordId === state.record.id)) show();
    }
    // An activity added elsewhere: the panel's list of them (and its history) follows.
    if (activities && events.some((e) => e.type === activities.type && e.recordId === state.record.id)) {
      activities.show();
    }
    if (staleAt !== null && staleAt !== state.etag) staleAt = null; // saved or reloaded since
    const edited = editor.changes();
    const newer = events.filter(
      (event) =>
        types.includes(event.type) &&
        event.recordId === state.record.id &&
        event.recordVersion > versionOf(state.etag),
    );
    if (newer.some((event) => event.changed.some((name) => name in edited))) {
      staleAt = state.etag;
    }
    if (!newer.length || staleAt !== null) return;
    clearTimeout(pending);
    pending = setTimeout(async () => {
      try {
        if (staleAt !== null) return;
        const next = await read();
        if (staleAt !== null) return;
        if (editor.changedUnder(next.record)) staleAt = state.etag;
        else take(next);
      } catch {
        // a Save will say what is wrong
      }
    }, FOLLOW_DELAY);
  };
  ctx.listeners.add(follow);
  return () => {
    ctx.listeners.delete(follow);
    clearTimeout(pending);
  };
}

// The edited fields of a record: each knows how the record shows it (`read`, a string to
// compare), how its control shows it (`value`), how to show a record (`write`) and what to
// send (`send`). `instant` fields are saved on their own as they change (the Stage select).
// The keyboard way of a drag: a new stage chosen in the panel's "Stage" select is saved at
// once (the select goes back on error), and the board follows. `panel` holds the panel's
// state, act, show, frame and showHistory.
export function saveStageOnChange(ctx, kind, stages, stage, panel) {
  // One save at a time; a choice made while one is on its way (arrow keys move the
  // select a stage a press) is saved when it ends, so the select never shows a stage the
  // record is not in.
  let saving = false;
  const save = async () => {
    if (saving || stage.value === panel.state.record.stageId) return;
    saving = true;
    const wanted = stage.value;
    const ran = await panel.act(async () => {
      try {
        panel.show(await updateRecord(ctx, kind, panel.state, { stageId: wanted }), "merge");
      } catch (error) {
        stage.value = panel.state.record.stageId;
        throw error;
      }
      const moved = stages.find((s) => s.id === panel.state.record.stageId);
      panel.frame.feedback.status(`Moved to ${moved ? moved.name : "another stage"}.`);
      ctx.refresh();
      panel.showHistory();
    });
    saving = false;
    if (!ran) stage.value = panel.state.record.stageId; // another action was under way
    else save();
  };
  stage.addEventListener("change", save);
}

// The name of the item of `list` whose id is `id` (an agent, a stage), else undefined.
export function nameIn(list, id) {
  return (list || []).find((item) => item.id === id)?.name;
}

export class Editor {
  constructor() {
    this.fields = [];
    this.baseline = null;
  }

  // A field is the person's edit when its control no longer holds what it showed once the
  // record was written into it (`written`), not when it differs from the record: a select
  // without an option for the record's value (an agent added since the workspace was
  // read) shows "" and must not be sent as a change nobody made.
  add(wire, control, options = {}) {
    const read = options.read || ((record) => (record[wire] ?? "").toString());
    const write =
      options.write ||
      ((record) => {
        const value = read(record);
        // A select without an option for the value (an agent added elsewhere since the
        // panel opened) gets one, named as `options.name` finds it, else by its id.
        if (control.tagName === "SELECT" && value && ![...control.options].some((o) => o.value === value)) {
          control.append(h("option", { value }, (options.name && options.name(value)) || value));
        }
        control.value = value;
      });
    const field = {
      wire,
      control,
      read,
      value: options.value || (() => control.value),
      send: options.send || (() => control.value),
      instant: Boolean(options.instant),
      written: undefined,
      write: (record) => {
        write(record);
        field.written = field.value();
      },
    };
    this.fields.push(field);
  }

  static edited(field) {
    return field.value() !== field.written;
  }

  // What each control holds now (taken as a save is sent).
  values() {
    return Object.fromEntries(this.fields.map((field) => [field.wire, field.value()]));
  }

  // The record a save answered: controls still holding what they held when it was sent
  // show it; one changed while the save was on its way keeps the change (Save sends it).
  saved(record, sent) {
    for (const field of this.fields) {
      if (field.value() === sent[field.wire]) field.write(record);
    }
    this.baseline = record;
  }

  // Every control shows the record.
  load(record) {
    this.baseline = record;
    for (const field of this.fields) field.write(record);
  }

  // A newer version of the record: controls the person has not changed follow it, the
  // others keep their edit (which Save then sends against the newer version).
  merge(record) {
    for (const field of this.fields) {
      if (!Editor.edited(field)) field.write(record);
    }
    this.baseline = record;
  }

  // Whether `record` changes a field the person has edited (from the version they edit).
  changedUnder(record) {
    return this.fields.some(
      (field) => !field.instant && Editor.edited(field) && field.read(record) !== field.read(this.baseline),
    );
  }

  // What the person typed and has not saved, in words ("Last name “Díaz”"): what a
  // session ended elsewhere says was lost with the panel (app.js, ended).
  unsaved(kind) {
    return Object.keys(this.changes()).map((wire) => {
      const shown = this.fields.find((field) => field.wire === wire).value();
      const text = typeof shown === "string" ? ` “${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}”` : "";
      return `${labelOf(kind, wire)}${text}`;
    });
  }

  changes() {
    const out = {};
    for (const field of this.fields) {
      if (!field.instant && Editor.edited(field)) out[field.wire] = field.send();
    }
    return out;
  }

  controls() {
    return Object.fromEntries(this.fields.map((field) => [field.wire, field.control]));
  }
}

// Runs one action of a panel at a time; its error goes to the panel's feedback (in the
// console's words when `explainer` has them: words.js explain), with the fields it names
// marked, and a "Reload" button when the record changed meanwhile (412).
export function actions(frame, controls, reload, explainer = async (error) => error) {
  let busy = false;
  // Resolves to whether `work` ran (false: another action was under way).
  return async (work) => {
    if (busy) return false;
    busy = true;
    frame.feedback.clear();
    try {
      await work();
    } catch (caught) {
      const error = await explainer(caught);
      const again =
        error.status === 412
          ? h(
              "button",
              {
                type: "button",
                // The refusal is no longer true once the record is read again.
                onclick: async () => {
                  frame.feedback.clear(); // removes this button: the keyboard goes to Save
                  frame.dialog.querySelector("form.edit button[type=submit]")?.focus();
                  await reload().catch((e) => frame.feedback.error(e));
                },
              },
              "Reload",
            )
          : null;
      frame.feedback.error(error, controls(), again);
    } finally {
      busy = false;
    }
    return true;
  };
}

// A panel's edit form: its rows and "Save"; for a caller who may not change such records
// (`noun`: "contacts"), the same rows in a disabled fieldset — the values shown, nothing
// to change or save (K.3: controls a role does not allow are not offered).
// A caller who may not change the record gets no controls at all (contract K.3: "Controls
// a user's role does not allow are not shown"): its values are in "Every field".
export function editForm(writable, noun, ...rows) {
  const form = h("form", { class: "edit", novalidate: true });
  if (writable) form.append(...rows, h("div", { class: "buttons" }, h("button", { type: "submit" }, "Save")));
  else form.append(h("p", { class: "muted" }, `Read only: you may not change ${noun}; every field is below.`));
  return form;
}

export function section(title, ...children) {
  const id = uid("section");
  return h("section", { class: "panel-section", "aria-labelledby": id }, h("h3", { id }, title), ...children);
}

// A list that shows "Loading…", then what `load` gives, or the error in its place.
export function loadingList(tag, className, empty) {
  const list = h(tag, { class: className });
  const holder = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  return {
    element: holder,
    async show(load) {
      try {
        const items = await load();
        list.replaceChildren(...items);
        holder.replaceChildren(items.length ? list : h("p", { class: "muted" }, empty));
      } catch (error) {
        holder.replaceChildren(h("p", { role: "alert", class: "error" }, error.message));
      }
    },
  };
}

// A record's history (D.3), oldest first: "what happened — by whom, when" (words.js
// historyLine, actorWords).
export async function historyItems(ctx, kind, path) {
  const events = [];
  let after = null;
  for (;;) {
    const page = await ctx.call("GET", path, { query: { pageSize: 100, after } });
    events.push(...page.events);
    if (page.events.length < 100 || page.next === after) break;
    after = page.next;
  }
  return events.map((event) => {
    const who = actorWords(event.actor);
    return h("li", {}, `${historyLine(ctx, kind, event)} — ${who ? `by ${who}, ` : ""}`, time(event.createdAt));
  });
}

function stageName(stages, id) {
  const stage = stages.find((s) => s.id === id);
  return stage ? stage.name : id;
}

// How a field's value reads in the list of every field.
function describe(ctx, kind, key, value) {
  if (value === null || value === undefined || value === "") return "—";
  if (Array.isArray(value)) {
    if (!value.length) return "none";
    if (key === "tags") return value.map((tag) => tag.name).join(", ");
    if (key === "variables") return value.map((v) => `${v.name} = ${v.value}`).join("; ");
    if (key === "activities") return value.map((a) => `${a.categoryType}: ${a.content}`).join("; ");
    return value.map((item) => (typeof item === "object" ? JSON.stringify(item) : String(item))).join(", ");
  }
  if (key === "stageId") {
    const stages = kind === "contact" ? ctx.workspace.contactStages : ctx.workspace.opportunityStages;
    return stageName(stages, value);
  }
  // Names the console holds, with the id after them (a viewer has no select to read).
  const named = { assignedAgentId: ctx.workspace.agents, segmentationId: ctx.workspace.segmentations }[key];
  const found = named?.find((item) => item.id === value);
  if (found) return `${found.name} (${value})`;
  if (key === "winLossStatus") return { 0: "open", 1: "won", 2: "lost" }[value] ?? String(value);
  if (key === "internalWhatsappNumber" || key === "platformSenderPhone") return formatPhone(value);
  if (key === "amount" || key === "finalAmount") return money(value); // as the cards show it
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// Every field of the record, by its label (words.js), in the record's order.
export function fieldList(ctx, kind, record) {
  return h(
    "dl",
    { class: "fields" },
    Object.entries(record).flatMap(([key, value]) => [h("dt", {}, labelOf(kind, key)), h("dd", {}, describe(ctx, kind, key, value))]),
  );
}
