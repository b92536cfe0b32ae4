// A contact's panel: its conversation (conversation.js; opening it marks it read), every
// field, the edit form (Stage saves as it changes: the keyboard way of a drag), activities
// with "Add activity", its opportunities and its history. A caller who may not change
// contacts (a viewer, a read-only key) sees the same values, read-only: no Save, no "Add
// activity", a Stage select it cannot use.
import { every } from "./api.js";
import { fullName, money } from "./cards.js";
import { conversation, markRead } from "./conversation.js";
import { h } from "./dom.js";
import { input, labelled, noneOr, select, time } from "./forms.js";
import {
  Editor,
  actions,
  editForm,
  fieldList,
  followChanges,
  historyItems,
  loadingList,
  nameIn,
  readRecord,
  saveStageOnChange,
  section,
  updateRecord,
} from "./panel-parts.js";
import { allows, writes } from "./session.js";
import { explain } from "./words.js";

const sortedIds = (ids) => [...ids].sort().join(",");

function tagChoice(tags) {
  const boxes = [];
  const empty = h("p", { class: "muted" }, "This workspace has no tags.");
  const fieldset = h("fieldset", { class: "choices" }, h("legend", {}, "Tags"));
  const addBox = (tag) => {
    const box = h("input", { type: "checkbox", value: tag.id });
    const chip = h("span", { class: "chip", "aria-hidden": "true" });
    chip.style.setProperty("--tag-color", tag.color || "#888");
    boxes.push(box);
    empty.remove();
    fieldset.append(h("label", { class: "check" }, box, chip, tag.name));
  };
  for (const tag of tags) addBox(tag);
  if (!tags.length) fieldset.append(empty);
  const checked = () => boxes.filter((box) => box.checked).map((box) => box.value);
  return {
    fieldset,
    read: (record) => sortedIds((record.tags || []).map((tag) => tag.id)),
    value: () => sortedIds(checked()),
    // A tag the record holds that has no box (created elsewhere since the panel opened)
    // gets one: a save must not drop what the form did not show (B.1 replaces the set).
    write: (record) => {
      const on = new Set((record.tags || []).map((tag) => tag.id));
      for (const tag of record.tags || []) if (!boxes.some((box) => box.value === tag.id)) addBox(tag);
      for (const box of boxes) box.checked = on.has(box.value);
    },
    send: checked,
  };
}

export async function contactPanel(ctx, id, frame) {
  const { workspace } = ctx;
  const path = `/api/contact/${encodeURIComponent(id)}`;
  const state = await readRecord(ctx, path, { shape: "full" });
  // Opening the conversation marks it read (K.3); the panel then edits that version.
  if (state.record.isRead === false && allows(ctx.session, "messages:write")) {
    try {
      await markRead(ctx, id);
      Object.assign(state, await readRecord(ctx, path, { shape: "full" }));
    } catch (error) {
      frame.feedback.status(`Not marked as read: ${error.message}`);
    }
  }

  const name = input();
  const lastname = input();
  const email = input({ type: "email" });
  const phone = input({ type: "tel", autocomplete: "off" });
  const tags = tagChoice(workspace.tags);
  const agent = select(noneOr(workspace.agents));
  const segmentation = select(noneOr(workspace.segmentations || []));
  const bot = h("input", { type: "checkbox" });
  const stage = select(workspace.contactStages.map((s) => [s.id, s.name]));
  const solved = h("input", { type: "checkbox" });
  const editor = new Editor();
  frame.dialog.unsaved = () => editor.unsaved("contact");
  editor.add("name", name);
  editor.add("lastname", lastname);
  editor.add("email", email);
  // Read in the full shape only (READ_HIDDEN); the API normalises what is typed.
  editor.add("internalWhatsappNumber", phone, { send: () => phone.value.trim() });
  editor.add("tags", tags.fieldset, tags);
  editor.add("assignedAgentId", agent, { send: () => agent.value || null, name: (v) => nameIn(ctx.workspace.agents, v) });
  editor.add("segmentationId", segmentation, {
    send: () => segmentation.value || null,
    name: (v) => nameIn(ctx.workspace.segmentations, v),
  });
  editor.add("isBotEnabled", bot, {
    read: (record) => String(record.isBotEnabled !== false),
    value: () => String(bot.checked),
    write: (record) => (bot.checked = record.isBotEnabled !== false),
    send: () => bot.checked,
  });
  editor.add("stageId", stage, { instant: true, name: (v) => nameIn(ctx.workspace.contactStages, v) });
  editor.add("isSolved", solved, {
    read: (record) => String(Boolean(record.isSolved)),
    value: () => String(solved.checked),
    write: (record) => (solved.checked = Boolean(record.isSolved)),
    send: () => solved.checked,
  });

  const details = h("div", {});
  const history = loadingList("ol", "history", "No events.");
  const showHistory = () => history.show(() => historyItems(ctx, "contact", `${path}/history`));
  const show = (next, how, sent) => {
    state.record = next.record;
    state.etag = next.etag;
    editor[how](next.record, sent);
    frame.title(fullName(next.record));
    details.replaceChildren(fieldList(ctx, "contact", next.record));
  };
  const reload = async () => {
    show(await readRecord(ctx, path, { shape: "full" }), "merge");
    frame.feedback.status("Reloaded: the latest version is shown, with your changes kept.");
    showHistory();
  };
  const explainer = (error) => explain(ctx, "contact", error, (other) => ctx.openPanel("contact", other));
  const act = actions(frame, () => ({ ...editor.controls(), phone }), reload, explainer);

  const writable = writes(ctx.session, "contact");
  const form = editForm(
    writable,
    "contacts",
    labelled("Name", name),
    labelled("Last name", lastname),
    labelled("Email", email),
    labelled("Phone", phone),
    tags.fieldset,
    labelled("Agent", agent),
    labelled("Segmentation", segmentation),
    labelled("Stage", stage),
    h("label", { class: "check" }, solved, "Solved"),
    h("label", { class: "check" }, bot, "Bot enabled"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(async () => {
      const changes = editor.changes();
      if (!Object.keys(changes).length) return frame.feedback.status("Nothing to save.");
      const sent = editor.values();
      show(await updateRecord(ctx, "contact", state, changes), "saved", sent);
      frame.feedback.status("Saved.");
      ctx.refresh();
      showHistory();
    });
  });
  if (writable) saveStageOnChange(ctx, "contact", workspace.contactStages, stage, { state, act, show, frame, showHistory });

  const activities = loadingList("ol", "activities", "No activities yet.");
  const showActivities = () =>
    activities.show(async () =>
      (await every(ctx.session, `${path}/activities`)).map((a) =>
        h("li", {}, time(a.date), h("p", {}, a.content)),
      ),
    );
  const content = h("textarea", { rows: 3 });
  const addActivity = h(
    "form",
    { class: "add-activity", novalidate: true },
    labelled("Activity", content),
    h("div", { class: "buttons" }, h("button", { type: "submit" }, "Add activity")),
  );
  const activityAct = actions(frame, () => ({ content }), reload, explainer);
  addActivity.addEventListener("submit", (event) => {
    event.preventDefault();
    activityAct(async () => {
      const written = content.value;
      await ctx.call("POST", `${path}/activities`, { body: { content: written } });
      if (content.value === written) content.value = ""; // what was typed meanwhile stays
      frame.feedback.status("Activity added.");
      showActivities();
      showHistory();
    });
  });

  // Shown only to a caller who may read them (a key without opportunities:read, say).
  const seesOpportunities = allows(ctx.session, "opportunities:read");
  const opportunities = loadingList("ul", "linked", "No opportunities.");
  const listed = new Set(); // the ids of the opportunities shown
  const showOpportunities = () =>
    seesOpportunities &&
    opportunities.show(async () =>
      (await every(ctx.session, "/api/opportunity", { contactId: state.record.id })).map((o) => {
        listed.add(o.id);
        // Closed, its panel leaves the list drawn again: the keyboard goes on from this
        // opportunity's new link (the old one, which had it, is gone).
        const closed = async () => {
          await showOpportunities();
          if (document.activeElement !== document.body) return;
          opportunities.element.querySelector(`[data-id="${CSS.escape(o.id)}"]`)?.focus();
        };
        const open = () => ctx.openPanel("opportunity", o.id)?.addEventListener("close", closed);
        return h(
          "li",
          {},
          h("button", { type: "button", class: "link", "data-id": o.id, onclick: open }, o.name),
          h("span", { class: "code" }, o.opportCode),
          h("span", { class: "amount" }, money(o.amount)),
        );
      }),
    );

  if (!frame.dialog.isConnected) return; // closed while it was loading
  // Changes made elsewhere meanwhile, a message's effects among them (panel-parts.js).
  const stopFollowing = followChanges(
    ctx,
    ["contact.updated", "contact.merged", "contact.restored"], // a merge into it changes it too
    state,
    editor,
    () => readRecord(ctx, path, { shape: "full" }),
    (next) => {
      show(next, "merge");
      showHistory();
    },
    {
      activities: {
        type: "contact.activity.created",
        show: () => {
          showActivities();
          showHistory();
        },
      },
      gone: () => frame.dialog.close(),
      // Deleted by someone else: said here (a save would be refused as not found).
      deleted: {
        type: "contact.deleted",
        show: () => frame.feedback.error({ message: "This contact was deleted elsewhere: changes to it can no longer be saved." }),
      },
      on: {
        // Restored since: the deletion's message is no longer true (the record is read
        // again as for any change).
        "contact.restored": () => frame.feedback.clear(),
        // A merge into it brings the duplicates' activities and messages too.
        "contact.merged": () => {
          showActivities();
          if (talk) talk.firstPage();
        },
      },
    },
  );
  // Its opportunities made, changed or removed elsewhere: the list follows (contract H).
  let opportunitiesPending = null;
  const followOpportunities = (events) => {
    const touched = (events || []).some(
      (e) =>
        e.type.startsWith("opportunity.") && (listed.has(e.recordId) || e.data?.contactId === state.record.id),
    );
    if (!touched || !seesOpportunities) return;
    clearTimeout(opportunitiesPending);
    opportunitiesPending = setTimeout(() => {
      listed.clear();
      showOpportunities();
    }, 100);
  };
  ctx.listeners.add(followOpportunities);
  const talk = allows(ctx.session, "messages:read") ? conversation(ctx, state.record.id) : null;
  frame.dialog.addEventListener("close", () => {
    stopFollowing();
    ctx.listeners.delete(followOpportunities);
    clearTimeout(opportunitiesPending);
    if (talk) talk.stop();
  });

  show(state, "load");
  frame.fill(
    ...(talk ? [section("Conversation", talk.element)] : []),
    talk ? section("Details", form) : form,
    section("Activities", activities.element, writable ? addActivity : null),
    ...(seesOpportunities ? [section("Opportunities", opportunities.element)] : []),
    section("History", history.element),
    section("Every field", details),
  );
  if (talk) talk.start();
  showActivities();
  showOpportunities();
  showHistory();
}
