// The people pages (contract K.3's people parts): Users and Keys for owners and admins,
// Profile for a signed-in person (password, two-factor with its QR code, sessions).
import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { Feedback, time, uid } from "./forms.js";
import { allows, holdsRole } from "./session.js";

const ROLES = ["owner", "admin", "agent", "viewer"];
const SCOPES = [
  "contacts:read", "contacts:write", "contacts:delete",
  "opportunities:read", "opportunities:write", "opportunities:delete",
  "messages:read", "messages:write", "events:read",
  "workspace:manage", "webhooks:manage", "users:manage", "keys:manage", "audit:read",
];
const root = document.querySelector("script[data-root]").dataset.root;

function note(message, kind = "status") {
  return h("p", { role: kind, class: kind === "alert" ? "error" : "note" }, message);
}

function row(id, label, control) {
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control);
}

// A form whose submit runs `action`; what it answers (an element, or several) shows below
// it. A refusal shows the API's
// message below it, and each field's message next to its control (`controls`: the body's
// field names → their controls), as in every other form of the console.
function form(label, children, submit, action, controls = {}) {
  const feedback = new Feedback();
  const button = h("button", { type: "submit" }, submit);
  // novalidate: the browser's own checks would keep the API's messages from showing.
  const element = h("form", { class: "people-form", "aria-label": label, novalidate: true }, ...children,
    feedback.slot, button);
  // One submit at a time: a double click made two keys, or showed an invitation and its
  // own "already exists". Held by aria-disabled, not disabled, so the focus stays on it.
  let busy = false;
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    button.setAttribute("aria-disabled", "true");
    feedback.clear();
    element.querySelectorAll("[role=alert],[role=status]").forEach((n) => n.remove());
    try {
      const shown = await action();
      if (shown) element.append(...[shown].flat().filter(Boolean));
    } catch (error) {
      if (error instanceof ApiError) feedback.error(error, controls);
      else element.append(note(String(error), "alert"));
    } finally {
      busy = false;
      button.removeAttribute("aria-disabled");
    }
  });
  return element;
}

// The Users and Keys tables: a header per column, and each cell carries its column's name
// (data-label), which it shows before its value at phone width, where each row is a card
// (console.css). The last column, of buttons, has no name.
const USER_COLUMNS = ["Name", "Email", "Role", "Workspaces", "Status", ""];
const KEY_COLUMNS = ["Name", "Scopes", "Workspaces", "Expires", "Created", "Last used", ""];

function peopleTable(label, columns, tbody) {
  return h("table", { class: "people", "aria-label": label },
    h("thead", {}, h("tr", {}, columns.map((name) => h("th", {}, name)))), tbody);
}

function cells(columns, values) {
  return values.map((value, i) => h("td", { "data-label": columns[i] || null }, value));
}

// Where the keyboard goes when what it was on is gone (a table filled again, a button
// replaced): `target`, made focusable without entering the Tab order.
function focusOn(target) {
  if (!target) return;
  if (!target.hasAttribute("tabindex") && !target.matches("a, button, input, select, textarea")) {
    target.setAttribute("tabindex", "-1");
  }
  target.focus();
}

// --- users -------------------------------------------------------------------------------

// Owners and admins belong to every workspace (J.1); agents and viewers to those chosen.
const everyWorkspace = (role) => role === "owner" || role === "admin";

// A checkbox per workspace, in a fieldset named by `legend`; `checked`: the ids ticked.
function workspaceChoice(spaces, legend, checked, prefix) {
  const boxes = spaces.map((w) => h("input", { type: "checkbox", value: w.id, id: `${prefix}-${w.id}`,
    checked: checked.includes(w.id) }));
  const fieldset = h("fieldset", { class: "workspace-choice" }, h("legend", {}, legend),
    boxes.map((box, i) => h("label", { for: box.id, class: "scope" }, box, spaces[i].name)));
  return { fieldset, boxes, ids: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

// What the caller may do to people (K.3: no control it may not use). A person: its role.
// A key (docs/api.md 10.2): as its maker — an account key, or one an owner made, acts as
// an owner; one an admin made is an admin's, and one made by a key is taken as an
// admin's (its maker is a key the console may not read); limited to some workspaces, it
// manages only agents and viewers wholly inside them.
function peopleReach(session, listed) {
  const holds = (role) => holdsRole(session, role);
  if (session.user) return { owner: session.user.role === "owner", within: null, holds };
  const made = session.keyRecord ?? {};
  const within = made.workspaceIds ? new Set(made.workspaceIds) : null;
  const maker = made.createdBy ? listed.find((u) => u.id === made.createdBy) : null;
  return { owner: !within && (!made.createdBy || maker?.role === "owner"), within, holds };
}

// Whether a role is one the caller may give: also none holding a scope the caller lacks
// (a key's own scopes; 10.1).
const offered = (reach, r) =>
  (reach.owner || r !== "owner") && !(reach.within && everyWorkspace(r)) && reach.holds(r);

// Whether the caller may change this user (an admin never an owner, J.2).
const manages = (reach, user) =>
  (reach.owner || user.role !== "owner") &&
  reach.holds(user.role) &&
  (!reach.within ||
    (!everyWorkspace(user.role) && (user.workspaceIds ?? []).every((w) => reach.within.has(w))));

export async function users(ctx) {
  const spaces = (await ctx.call("GET", "/api/workspace")).data;
  let reach = null;
  const tbody = h("tbody", {});
  // The table as the API has it now (after an invitation: the new user at once).
  const fill = async () => {
    const listed = (await ctx.call("GET", "/api/user")).data;
    reach ??= peopleReach(ctx.session, listed);
    tbody.replaceChildren(...listed.map((user) => userRow(ctx, user, reach, spaces)));
  };
  await fill();
  const email = h("input", { type: "email", required: true });
  const name = h("input", { required: true });
  const role = h("select", {}, ROLES.filter((r) => offered(reach, r)).map((r) =>
    h("option", { value: r }, r)));
  role.value = "agent";
  const places = workspaceChoice(spaces, "Workspaces (agents and viewers)", [ctx.session.workspace], "ws");
  const invite = form("Invite a user", [row("invite-email", "Email", email),
    row("invite-name", "Name", name), row("invite-role", "Role", role), places.fieldset], "Invite", async () => {
    const made = await ctx.call("POST", "/api/user", {
      body: { email: email.value.trim(), name: name.value.trim(), role: role.value, workspaceIds: places.ids() },
    });
    email.value = name.value = "";
    // The link stays shown even when the table cannot be read again just now.
    const unlisted = await fill().then(() => null, (error) => note(error.message, "alert"));
    return [note(`Invitation link (send it to ${made.user.email}): ${made.inviteUrl}`), unlisted];
  }, { email, name, role, workspaceIds: places.fieldset });
  const table = peopleTable("Users of the account", USER_COLUMNS, tbody);
  return h("section", { "aria-label": "Users" }, table, h("h3", {}, "Invite"), invite);
}

// How long a role chosen with the arrow keys waits for the next key before it is saved.
const ROLE_PAUSE = 1500;

// A user's row: its role and workspaces change as they are chosen (PUT /api/user/{id}), the
// row's controls held while one change is saved, then "Saved."; a refusal puts the control
// back as stored and shows the API's message in the row.
function userRow(ctx, user, reach, spaces, saved = false) {
  const locked = !manages(reach, user);
  const role = h("select", { id: `role-${user.id}`, "aria-label": `Role of ${user.name}`, disabled: locked },
    ROLES.filter((r) => offered(reach, r) || r === user.role).map((r) =>
      h("option", { value: r }, r)));
  role.value = user.role;
  const problems = h("div", { class: "problems" });
  const actions = [];
  let element = null;
  // The answer's record redraws the row; a refusal is shown after `undo` puts it back.
  // `next`: where the keyboard was going when leaving the role's select saved it.
  const change = async (body, undo = () => {}, next = null) => {
    problems.replaceChildren();
    // The keyboard stays on the redrawn control (or goes on to the one it was going to).
    const focused = next?.id || document.activeElement?.id;
    const held = [...element.querySelectorAll("select, input, button")].filter((c) => !c.disabled);
    for (const control of held) control.disabled = true;
    try {
      const done = await ctx.call("PUT", `/api/user/${user.id}`, { body });
      element.replaceWith(userRow(ctx, done.user, reach, spaces, true));
      // The control may be gone from the redrawn row (an admin's has no workspace boxes):
      // then its role select.
      if (focused) (document.getElementById(focused) ?? document.getElementById(`role-${user.id}`))?.focus();
    } catch (error) {
      for (const control of held) control.disabled = false;
      undo();
      problems.append(note(error.message, "alert"));
      // Held while saving, the control lost the keyboard: it goes back to it.
      if (focused) document.getElementById(focused)?.focus();
    }
  };
  let places = null;
  if (everyWorkspace(user.role)) {
    places = h("span", {}, "All workspaces");
  } else {
    const choice = workspaceChoice(spaces, `Workspaces of ${user.name}`, user.workspaceIds || [], `user-${user.id}`);
    for (const box of choice.boxes) {
      box.disabled = locked;
      box.addEventListener("change", () =>
        change({ workspaceIds: choice.ids() }, () => (box.checked = !box.checked)));
    }
    places = choice.fieldset;
  }
  // A role picked with the pointer is saved at once. Arrow keys on a closed select change
  // it one step at a time: saving each step would grant, and audit, every role on the way
  // (viewer → agent → admin). From the keyboard the role is saved where the person stops:
  // Enter, leaving the control, or a pause of ROLE_PAUSE ms.
  let keyed = false;
  let pending = null;
  const saveRole = (next = null) => {
    clearTimeout(pending);
    pending = null;
    keyed = false;
    if (role.value === user.role) return;
    const body = { role: role.value };
    // An owner or admin made an agent or viewer keeps the workspaces it had: every one.
    if (!everyWorkspace(role.value) && everyWorkspace(user.role)) body.workspaceIds = user.workspaceIds;
    change(body, () => (role.value = user.role), next);
  };
  role.addEventListener("pointerdown", () => (keyed = false));
  role.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && pending) {
      event.preventDefault();
      saveRole();
    } else if (event.key !== "Tab") keyed = true;
  });
  role.addEventListener("change", () => {
    clearTimeout(pending);
    if (keyed) pending = setTimeout(saveRole, ROLE_PAUSE);
    else saveRole();
  });
  // Left with Tab: the save holds the row's controls, the one Tab went to among them, so
  // the keyboard is taken there again once the row is redrawn (not the page's start).
  role.addEventListener("blur", (event) => {
    if (pending) saveRole(event.relatedTarget);
  });
  if (!locked) {
    const active = user.status !== "disabled";
    // Its id is the row's, whatever it says: the redrawn row's button gets the focus back.
    actions.push(h("button", { type: "button", id: `status-${user.id}`,
      "aria-label": `${active ? "Disable" : "Enable"} ${user.name}`,
      onclick: () => change({ status: active ? "disabled" : "active" }) }, active ? "Disable" : "Enable"));
    actions.push(h("button", {
      type: "button",
      id: `reset-${user.id}`,
      "aria-label": `Reset link for ${user.name}`,
      onclick: async () => {
        problems.replaceChildren();
        try {
          const made = await ctx.call("POST", `/api/user/${user.id}/reset-link`, { body: {} });
          problems.append(note(`Reset link: ${made.resetUrl}`));
        } catch (error) {
          problems.append(note(error.message, "alert"));
        }
      },
    }, "Reset link"));
  }
  if (saved) problems.append(note("Saved."));
  actions.push(problems);
  // An owner, to an admin, shows its role as text: no control it may not use (K.3).
  element = h("tr", {}, cells(USER_COLUMNS,
    [user.name, user.email, locked ? user.role : role, places, user.status, actions]));
  return element;
}

// --- keys --------------------------------------------------------------------------------

// A `datetime-local` value as the API's timestamp (UTC); the text itself when it is not a
// date, for the API to name the problem.
function instant(value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

export async function keys(ctx) {
  const spaces = (await ctx.call("GET", "/api/workspace")).data;
  const names = new Map(spaces.map((w) => [w.id, w.name]));
  const tbody = h("tbody", {});
  const fill = async () => {
    const listed = (await ctx.call("GET", "/api/key")).data;
    tbody.replaceChildren(...listed.map((key) => keyRow(ctx, key, names, fill)));
  };
  await fill();
  const name = h("input", { required: true });
  // Only what the caller holds: a key grants no scope beyond its own (J.5).
  const boxes = SCOPES.filter((scope) => allows(ctx.session, scope)).map((scope) => {
    const box = h("input", { type: "checkbox", value: scope, id: `scope-${scope}` });
    return h("label", { for: box.id, class: "scope" }, box, scope);
  });
  const scopes = h("fieldset", {}, h("legend", {}, "Scopes"), boxes);
  // J.5: the only workspaces it may use (none ticked: every one), and when it stops working.
  const places = workspaceChoice(spaces, "Workspaces (none ticked: every workspace)", [], "key-ws");
  const expires = h("input", { type: "datetime-local" });
  const expiresRow = row("key-expires", "Expires", expires);
  const hint = h("span", { class: "hint", id: "key-expires-hint" }, "Empty: it never expires. Your local time.");
  expiresRow.append(hint);
  expires.setAttribute("aria-describedby", hint.id);
  const create = form("Create a key", [row("key-name", "Name", name), scopes, places.fieldset, expiresRow],
    "Create key", async () => {
      const chosen = boxes.map((b) => b.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
      const body = { name: name.value.trim(), scopes: chosen };
      if (places.ids().length) body.workspaceIds = places.ids();
      if (expires.value) body.expiresAt = instant(expires.value);
      const made = await ctx.call("POST", "/api/key", { body });
      // The secret stays shown (this once) even when the table cannot be read again now.
      const unlisted = await fill().then(() => null, (error) => note(error.message, "alert"));
      return [note(`New key (shown this once): ${made.apiKey}`), unlisted];
    }, { name, scopes, workspaceIds: places.fieldset, expiresAt: expires });
  const table = peopleTable("API keys of the account", KEY_COLUMNS, tbody);
  return h("section", { "aria-label": "Keys" }, table, h("h3", {}, "New key"), create);
}

function keyRow(ctx, key, names, fill) {
  const problems = h("div", { class: "problems" });
  const revoke = h("button", {
    type: "button",
    "aria-label": `Revoke ${key.name || "the key without a name"}`,
    onclick: async () => {
      problems.replaceChildren();
      revoke.disabled = true;
      try {
        await ctx.call("DELETE", `/api/key/${key.id}`);
        await fill();
        focusOn(document.querySelector(`tr[data-key="${key.id}"]`)); // its row, now "revoked"
      } catch (error) {
        revoke.disabled = false;
        problems.append(note(error.message, "alert"));
      }
    },
  }, "Revoke");
  const places = key.workspaceIds ? key.workspaceIds.map((id) => names.get(id) || id).join(", ") : "every one";
  return h("tr", { "data-key": key.id }, cells(KEY_COLUMNS, [
    key.name || "(no name)", key.scopes.join(", "), places, key.expiresAt ? time(key.expiresAt) : "never",
    time(key.createdAt), key.lastUsedAt ? time(key.lastUsedAt) : "never", key.revokedAt ? "revoked" : [revoke, problems],
  ]));
}

// --- profile -----------------------------------------------------------------------------

export async function profile(ctx) {
  const me = (await ctx.call("GET", "/api/me")).user;
  const current = h("input", { type: "password", autocomplete: "current-password", required: true });
  // No minlength: the API judges the password, and its message shows beside the field.
  const next = h("input", { type: "password", autocomplete: "new-password", required: true });
  const password = form("Change password", [row("current-password", "Current password", current),
    row("new-password", "New password", next)], "Change password", async () => {
    await ctx.call("PUT", "/api/me/password", {
      body: { currentPassword: current.value, newPassword: next.value },
    });
    current.value = next.value = "";
    // The sessions it ended leave the list below (their "End" would only be refused).
    await sessions.fill().catch(() => {});
    return note("Password changed; your other sessions were signed out.");
  }, { currentPassword: current, newPassword: next });
  const sessions = await sessionList(ctx);
  return h("section", { "aria-label": "Profile" },
    h("p", {}, `${me.name} — ${me.email} — ${me.role}`),
    h("h3", {}, "Password"), password,
    h("h3", {}, "Two-factor"), twoFactor(ctx, me),
    h("h3", {}, "Sessions"), sessions.element);
}

// The person's sessions, each but this one with "End", and "Sign out other sessions"; a
// refusal (a session ended meanwhile, say) shows the API's message, and the list is read
// again.
async function sessionList(ctx) {
  const list = h("ul", { class: "sessions", "aria-label": "Your sessions" });
  const problems = h("div", { class: "problems" });
  const signOutOthers = h("button", { type: "button" }, "Sign out other sessions");
  let others = [];
  const fill = async () => {
    const sessions = (await ctx.call("GET", "/api/session/list")).data;
    others = sessions.filter((s) => !s.current);
    // Each "End" is described by its session's line, so that a screen reader tells them
    // apart (its name stays "End").
    list.replaceChildren(...sessions.map((s) => {
      const what = h("span", { id: uid("session") },
        `${s.userAgent || "unknown browser"} — ${s.ip} — since `, time(s.createdAt));
      return h("li", {}, what,
        s.current ? " (this one)" : h("button", { type: "button", "aria-describedby": what.id, onclick: () => endOne(s) }, "End"));
    }));
  };
  const end = async (ending) => {
    for (const s of ending) {
      try {
        await ctx.call("DELETE", `/api/session/${s.id}`);
      } catch (error) {
        problems.append(note(error.message, "alert"));
      }
    }
    try {
      await fill();
    } catch (error) {
      problems.append(note(error.message, "alert"));
    }
  };
  // The list is drawn again: the keyboard goes to the "End" now in that place (the next
  // session's), else the last one, else the list.
  let ending = false; // a double click on "End" ends it once (the second found it ended)
  const endOne = async (one) => {
    if (ending) return;
    ending = true;
    try {
      await endAndFocus(one);
    } finally {
      ending = false;
    }
  };
  const endAndFocus = async (one) => {
    const place = others.findIndex((o) => o.id === one.id); // its End among the others'
    problems.replaceChildren();
    await end([one]);
    const left = [...list.querySelectorAll("button")];
    const next = left[Math.min(Math.max(place, 0), left.length - 1)];
    if (next) next.focus();
    else focusOn(list);
  };
  // The list is read again first, and again after: a session that signed in since it was
  // drawn (an intruder's, say) is ended too, not left live under a list that shows it. So
  // the button is never disabled, even when the list drawn shows this session alone.
  let signingOut = false; // a double click runs it once: the second would find them ended
  signOutOthers.addEventListener("click", async () => {
    if (signingOut) return;
    signingOut = true;
    try {
      await signOutTheOthers();
    } finally {
      signingOut = false;
    }
  });
  const signOutTheOthers = async () => {
    problems.replaceChildren();
    for (let round = 0; round < 3; round += 1) {
      try {
        await fill();
      } catch (error) {
        problems.append(note(error.message, "alert"));
        return;
      }
      if (others.length === 0) break;
      await end(others);
      if (others.length === 0) break;
    }
    if (others.length) return; // still some (the API's messages say why)
    problems.append(note("Every other session is signed out."));
    focusOn(list); // none left: the keyboard goes to the list
  };
  await fill();
  return { element: h("div", {}, list, signOutOthers, problems), fill };
}

function twoFactor(ctx, me) {
  const box = h("div", { class: "two-factor" });
  if (me.twoFactorEnabled) {
    const password = h("input", { type: "password", autocomplete: "current-password", required: true });
    box.append(note("Two-factor is on."), form("Turn two-factor off",
      [row("2fa-password", "Password", password)], "Turn off", async () => {
        await ctx.call("DELETE", "/api/me/2fa", { body: { password: password.value } });
        await ctx.refresh();
        // The form is gone with the page drawn again: the keyboard goes to what replaced it.
        document.querySelector(".two-factor button")?.focus();
      }, { password }));
    return box;
  }
  const problems = h("div", { class: "problems" });
  box.append(h("button", {
    type: "button",
    onclick: async () => {
      problems.replaceChildren();
      let started;
      let svg;
      try {
        started = await ctx.call("POST", "/api/me/2fa", { body: {} });
        const drawn = await fetch(`${root}/console/qr`, { method: "POST", body: started.otpauthUrl });
        if (!drawn.ok) throw new Error(await drawn.text());
        svg = await drawn.text();
      } catch (error) {
        problems.append(note(error.message, "alert"));
        return;
      }
      const image = h("img", { alt: "QR code for your authenticator app", class: "qr",
        src: `data:image/svg+xml;base64,${btoa(svg)}` });
      const code = h("input", { inputmode: "numeric", autocomplete: "one-time-code", required: true });
      box.replaceChildren(image, h("p", {}, `Or enter this key: ${started.secret}`),
        form("Turn two-factor on", [row("2fa-code", "Code", code)], "Turn on", async () => {
          const done = await ctx.call("POST", "/api/me/2fa/enable", { body: { code: code.value.trim() } });
          const saying = note("Two-factor is on. Keep these recovery codes (shown once):");
          box.replaceChildren(saying, h("ul", { class: "recovery" }, done.recoveryCodes.map((c) => h("li", {}, c))));
          focusOn(saying);
        }, { code }));
      code.focus(); // the button that began it is gone: the keyboard goes to the code
    },
  }, "Set up two-factor"), problems);
  return box;
}
