// An opportunity's panel: its status with Won / Lost / Reopen, every field, the edit form
// (Stage saves as it changes), its contact, activities with their category, and history.
// A caller who may not change opportunities sees the values read-only: no Save, Won, Lost,
// Reopen or "Add activity".
import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { amountInput, amountOf, input, labelled, noneOr, select, time } from "./forms.js";
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

const CATEGORIES = ["Calls", "Meeting", "Whatsapp", "Email"];
const OUTCOMES = { 0: "Open", 1: "Won", 2: "Lost" };

function contactLine(ctx, contactId) {
  const line = h("p", { class: "contact-line" });
  if (!contactId) return line;
  // A caller who may not read contacts (a key without contacts:read) is shown the id only:
  // reading its name, or opening its panel, would only be refused.
  if (!allows(ctx.session, "contacts:read")) {
    line.append(`Contact: ${contactId}`);
    return line;
  }
  const open = () => ctx.openPanel("contact", contactId);
  const button = h("button", { type: "button", class: "link", onclick: open }, contactId);
  line.append("Contact: ", button);
  ctx.call("GET", `/api/contact/${encodeURIComponent(contactId)}`).then(
    (data) => {
      const contact = data.data[0];
      button.textContent = [contact.name, contact.lastname].filter(Boolean).join(" ") || contactId;
    },
    (error) => {
      // Not found: deleted, or hidden from an agent who sees only what is assigned to it
      // (docs/api.md 10.5) — a link that could only fail is not offered. Any other failure
      // leaves the id, which may open once the server answers.
      if (error instanceof ApiError && error.status === 404) {
        line.replaceChildren(`Contact: ${contactId} (not one you can open)`);
      }
    },
  );
  return line;
}

export async function opportunityPanel(ctx, id, frame) {
  const { workspace } = ctx;
  const path = `/api/opportunity/${encodeURIComponent(id)}`;
  const state = await readRecord(ctx, path);

  const name = input();
  const description = h("textarea", { rows: 3 });
  const { control: amount, hint: amountHint } = amountInput();
  const amountRow = labelled("Amount", amount);
  amountRow.append(amountHint);
  const agent = select(noneOr(workspace.agents));
  const stage = select(workspace.opportunityStages.map((s) => [s.id, s.name]));
  const expiration = input({ type: "date" });
  const editor = new Editor();
  frame.dialog.unsaved = () => editor.unsaved("opportunity");
  editor.add("name", name);
  editor.add("description", description);
  editor.add("amount", amount, { send: () => amountOf(amount.value) });
  editor.add("assignedAgentId", agent, { send: () => agent.value || null, name: (v) => nameIn(ctx.workspace.agents, v) });
  editor.add("stageId", stage, { instant: true, name: (v) => nameIn(ctx.workspace.opportunityStages, v) });
  // A date: the day of the stored timestamp (sent as that day, midnight UTC).
  editor.add("expirationDate", expiration, {
    read: (record) => (record.expirationDate || "").slice(0, 10),
    send: () => expiration.value || null,
  });

  const badge = h("span", { class: "badge" });
  const won = h("button", { type: "button" }, "Won");
  const lost = h("button", { type: "button" }, "Lost");
  const reopen = h("button", { type: "button" }, "Reopen");
  let deciding = false; // Won, Lost or Reopen pressed, its save on its way
  const contact = h("div", {});
  const details = h("div", {});
  const history = loadingList("ol", "history", "No events.");
  const showHistory = () => history.show(() => historyItems(ctx, "opportunity", `${path}/history`));
  const show = (next, how, sent) => {
    const linked = state.record.contactId;
    state.record = next.record;
    state.etag = next.etag;
    editor[how](next.record, sent);
    frame.title(next.record.name);
    const status = next.record.winLossStatus;
    badge.textContent = OUTCOMES[status] ?? String(status);
    badge.className = `badge outcome-${(OUTCOMES[status] || "other").toLowerCase()}`;
    won.hidden = lost.hidden = status !== 0;
    reopen.hidden = status === 0;
    // The button pressed hides itself: the keyboard goes to the one shown in its place.
    if (deciding) (status === 0 ? won : reopen).focus();
    if (how === "load" || linked !== next.record.contactId) {
      contact.replaceChildren(contactLine(ctx, next.record.contactId));
    }
    details.replaceChildren(fieldList(ctx, "opportunity", next.record));
  };
  const reload = async () => {
    show(await readRecord(ctx, path), "merge");
    frame.feedback.status("Reloaded: the latest version is shown, with your changes kept.");
    showHistory();
  };
  const explainer = (error) => explain(ctx, "opportunity", error, (cid) => ctx.openPanel("contact", cid));
  const act = actions(frame, () => editor.controls(), reload, explainer);
  const save = (changes, how, message) =>
    act(async () => {
      const sent = editor.values();
      show(await updateRecord(ctx, "opportunity", state, changes), how, sent);
      frame.feedback.status(message);
      ctx.refresh();
      showHistory();
    });

  const decide = async (status, message) => {
    deciding = true;
    try {
      await save({ winLossStatus: status }, "merge", message);
    } finally {
      deciding = false;
    }
  };
  won.addEventListener("click", () => decide(1, "Marked as won."));
  lost.addEventListener("click", () => decide(2, "Marked as lost."));
  reopen.addEventListener("click", () => decide(0, "Reopened."));

  const writable = writes(ctx.session, "opportunity");
  const form = editForm(
    writable,
    "opportunities",
    labelled("Name", name),
    labelled("Description", description),
    amountRow,
    labelled("Agent", agent),
    labelled("Stage", stage),
    labelled("Expiration date", expiration),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const changes = editor.changes();
    if (!Object.keys(changes).length) {
      frame.feedback.clear();
      frame.feedback.status("Nothing to save.");
      return;
    }
    save(changes, "saved", "Saved.");
  });
  if (writable) {
    saveStageOnChange(ctx, "opportunity", workspace.opportunityStages, stage, { state, act, show, frame, showHistory });
  }

  const activities = loadingList("ol", "activities", "No activities yet.");
  const showActivities = () =>
    activities.show(async () =>
      (await ctx.call("GET", `${path}/agent/activities`)).data.map((a) =>
        h("li", {}, time(a.date), " ", h("span", { class: "category" }, a.categoryType), h("p", {}, a.content)),
      ),
    );
  const category = select(CATEGORIES.map((c) => [c, c]));
  const content = h("textarea", { rows: 3 });
  const addActivity = h(
    "form",
    { class: "add-activity", novalidate: true },
    labelled("Category", category),
    labelled("Activity", content),
    h("div", { class: "buttons" }, h("button", { type: "submit" }, "Add activity")),
  );
  const activityAct = actions(frame, () => ({ content, categoryType: category, date: content }), reload, explainer);
  addActivity.addEventListener("submit", (event) => {
    event.preventDefault();
    activityAct(async () => {
      const body = { content: content.value, categoryType: category.value, date: new Date().toISOString() };
      await ctx.call("POST", `${path}/agent/activities`, { body });
      if (content.value === body.content) content.value = ""; // what was typed meanwhile stays
      frame.feedback.status("Activity added.");
      showActivities();
      // An activity is a change of the opportunity (its updatedDate): read its new version.
      show(await readRecord(ctx, path), "merge");
      showHistory();
    });
  });

  // Changes made elsewhere meanwhile (panel-parts.js).
  const stopFollowing = followChanges(
    ctx,
    // An activity is a change of the opportunity (its updatedDate, its version).
    ["opportunity.updated", "opportunity.activity.created"],
    state,
    editor,
    () => readRecord(ctx, path),
    (next) => {
      show(next, "merge");
      showHistory();
    },
    {
      activities: { type: "opportunity.activity.created", show: () => showActivities() },
      gone: () => frame.dialog.close(),
      // Deleted by someone else: said here (a save would be refused as not found).
      deleted: {
        type: "opportunity.deleted",
        show: () => frame.feedback.error({ message: "This opportunity was deleted elsewhere: changes to it can no longer be saved." }),
      },
    },
  );
  frame.dialog.addEventListener("close", stopFollowing);

  show(state, "load");
  frame.fill(
    h("div", { class: "outcome" }, h("p", {}, "Status: ", badge), writable ? [won, lost, reopen] : null),
    contact,
    form,
    section("Activities", activities.element, writable ? addActivity : null),
    section("History", history.element),
    section("Every field", details),
  );
  showActivities();
  showHistory();
}
