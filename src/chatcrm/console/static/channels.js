// The Channels page (contract K.2, K.3) for owners and admins: the workspace's WhatsApp
// channels, each with the webhook URL and verify token to paste into Meta's dashboard;
// a new channel; enable / disable; delete. The access token and app secret are written
// here and never shown: the API never answers them.
import { h } from "./dom.js";
import { Feedback, time, uid } from "./forms.js";

function alertOf(message) {
  return h("p", { role: "alert", class: "error" }, message);
}

function row(label, control, hint) {
  control.id = control.id || uid("channel-field");
  const hintElement = hint ? h("p", { class: "hint", id: `${control.id}-hint` }, hint) : null;
  if (hintElement) control.setAttribute("aria-describedby", hintElement.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintElement);
}

// A value to copy into Meta's dashboard: a read-only box (selected on focus) and "Copy".
function copyable(label, value) {
  const box = h("input", { id: uid("copy"), type: "text", readonly: true, value, class: "copy-value" });
  box.addEventListener("focus", () => box.select());
  const done = h("span", { class: "copied", "aria-live": "polite" });
  const labelId = uid("copy-label");
  // Named "Copy", described by its field's label ("Copy, Webhook URL"): a name repeating
  // the label would make the label name the button too (found with the box by it).
  const copy = h("button", { type: "button", "aria-describedby": labelId }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value);
      done.textContent = "Copied.";
    } catch {
      box.focus(); // selected: the keyboard's copy takes it
      done.textContent = "Press Ctrl+C to copy.";
    }
  });
  return h("div", { class: "field copy" }, h("label", { for: box.id, id: labelId }, label), box, copy, done);
}

const NEW_CHANNEL_HEADING = "new-channel-heading";

function channelCard(ctx, channel, reload) {
  const headingId = uid("channel");
  const problems = h("div", { class: "problems" });
  const fail = (error) => problems.replaceChildren(alertOf(error.message));
  const toggle = h(
    "button",
    {
      type: "button",
      "data-toggle": channel.id,
      onclick: async () => {
        toggle.disabled = true;
        try {
          // The A.1 body: the one field named in paramToUpdate.
          const body = { paramToUpdate: "enabled", enabled: !channel.enabled };
          await ctx.call("PUT", `/api/channel/${encodeURIComponent(channel.id)}`, { body });
          await reload();
          // The card is drawn anew: the keyboard goes on from its new Enable/Disable.
          document.querySelector(`[data-toggle="${CSS.escape(channel.id)}"]`)?.focus();
        } catch (error) {
          toggle.disabled = false;
          fail(error);
          toggle.focus(); // held while it was sent, it lost the keyboard: it goes back to it
        }
      },
    },
    channel.enabled ? "Disable" : "Enable",
  );
  const remove = h("button", { type: "button", class: "danger" }, "Delete");
  const actions = h("div", { class: "buttons" }, toggle, remove);
  // Deleting asks once more, in the page (no browser dialog).
  remove.addEventListener("click", () => {
    const sure = h("button", { type: "button", class: "danger" }, `Delete ${channel.name}`);
    const cancel = h("button", { type: "button" }, "Cancel");
    const question = h(
      "div",
      { class: "buttons confirm", role: "group", "aria-label": "Confirm delete" },
      h("span", {}, "Messages stop arriving through this channel. Delete it?"),
      sure,
      cancel,
    );
    cancel.addEventListener("click", () => {
      question.replaceWith(actions);
      remove.focus(); // back where the question began
    });
    sure.addEventListener("click", async () => {
      sure.disabled = true;
      try {
        await ctx.call("DELETE", `/api/channel/${encodeURIComponent(channel.id)}`);
        await reload();
        document.getElementById(NEW_CHANNEL_HEADING)?.focus(); // its card is gone
      } catch (error) {
        sure.disabled = false;
        fail(error);
        sure.focus(); // held while it was sent, it lost the keyboard: it goes back to it
      }
    });
    actions.replaceWith(question);
    cancel.focus();
  });
  return h(
    "section",
    { class: `channel ${channel.enabled ? "enabled" : "disabled"}`, "aria-labelledby": headingId },
    h(
      "div",
      { class: "channel-head" },
      h("h3", { id: headingId }, channel.name),
      h("span", { class: `badge ${channel.enabled ? "on" : "off"}` }, channel.enabled ? "Enabled" : "Disabled"),
    ),
    h(
      "div",
      { class: "for-meta" },
      h("p", {}, "Paste these into your app's WhatsApp webhook settings in Meta's dashboard:"),
      copyable("Webhook URL", channel.webhookUrl),
      copyable("Verify token", channel.verifyToken),
    ),
    h(
      "dl",
      { class: "channel-fields" },
      [
        ["Type", channel.type],
        ["Phone number", channel.displayPhoneNumber],
        ["Phone number ID", channel.phoneNumberId],
        ["API base URL", channel.apiBaseUrl],
        ["Created", time(channel.createdAt)],
      ].flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value || "—")]),
    ),
    actions,
    problems,
  );
}

// A phone number ID that another channel holds is refused with 409 DUPLICATE_CHANNEL and
// no field errors (docs/api.md 11.10): its message goes beside "Phone number ID", the field
// to correct, as a 422's messages go beside theirs.
function fieldOf(error) {
  if (error.code !== "DUPLICATE_CHANNEL" || (error.errors || []).length) return error;
  error.errors = [{ field: "phoneNumberId", message: error.message }];
  return error;
}

function newChannelForm(ctx, created) {
  const name = h("input", { required: true, autocomplete: "off" });
  const phoneNumberId = h("input", { required: true, autocomplete: "off", inputmode: "numeric" });
  const displayPhoneNumber = h("input", { required: true, autocomplete: "off", type: "tel" });
  const accessToken = h("input", { type: "password", required: true, autocomplete: "off" });
  const appSecret = h("input", { type: "password", required: true, autocomplete: "off" });
  const verifyToken = h("input", { autocomplete: "off" });
  const apiBaseUrl = h("input", { type: "url", autocomplete: "off" });
  const controls = { name, phoneNumberId, displayPhoneNumber, accessToken, appSecret, verifyToken, apiBaseUrl };
  const feedback = new Feedback(); // the API's messages beside the fields they name
  const form = h(
    "form",
    { class: "people-form channel-form", "aria-label": "New channel", novalidate: true },
    h("p", {}, "Type: WhatsApp (Meta's Cloud API)"),
    row("Name", name),
    row("Phone number ID", phoneNumberId, "From WhatsApp › API Setup in Meta's dashboard."),
    row("Display phone number", displayPhoneNumber),
    row("Access token", accessToken, "Written, never shown again."),
    row("App secret", appSecret, "Checks the signature of what Meta sends; never shown again."),
    row("Verify token (optional)", verifyToken, "Left empty: 32 random characters are chosen."),
    row("API base URL (optional)", apiBaseUrl, "Left empty: https://graph.facebook.com/v21.0"),
    h("button", { type: "submit" }, "Create channel"),
    feedback.slot,
    feedback.statusLine,
  );
  // One create at a time: a double click showed "created" and its own duplicate refusal.
  let busy = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    feedback.clear();
    const body = { type: "whatsapp" };
    for (const [key, control] of Object.entries(controls)) {
      const value = control.type === "password" ? control.value : control.value.trim();
      if (value !== "" || !["verifyToken", "apiBaseUrl"].includes(key)) body[key] = value;
    }
    try {
      const made = await ctx.call("POST", "/api/channel", { body });
      for (const control of Object.values(controls)) control.value = "";
      await created();
      feedback.status(`Channel “${made.channel.name}” created: its webhook URL and verify token are above.`);
    } catch (error) {
      feedback.error(fieldOf(error), controls);
    } finally {
      busy = false;
    }
  });
  return form;
}

export async function channels(ctx) {
  const list = h("div", { class: "channels" });
  const load = async () => {
    const listed = (await ctx.call("GET", "/api/channel")).data;
    list.replaceChildren(
      ...(listed.length
        ? listed.map((channel) => channelCard(ctx, channel, load))
        : [h("p", { class: "muted" }, "No channel yet: messages can be recorded, not sent or received.")]),
    );
  };
  await load();
  return h(
    "section",
    { class: "channels-page", "aria-label": "Channels" },
    list,
    h("h3", { id: NEW_CHANNEL_HEADING, tabindex: -1 }, "New WhatsApp channel"),
    newChannelForm(ctx, load),
  );
}
