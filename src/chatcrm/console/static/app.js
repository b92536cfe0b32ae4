// The console's flow: sign in (e-mail and password, or an API key), pick a workspace, then
// its views — the contacts board, the opportunities board, the pipeline and the people and
// channels pages — chosen in the nav and kept in the URL's hash; "Switch workspace" goes
// back to the choice. An invitation or reset link (`#invite/…`, `#reset/…`) opens the "Set
// password" page, also when followed in a tab already open here. Each view gets the same
// context (`ctx`, below).
import { ApiError, call, onSessionReplaced, passing, REPLACED } from "./api.js";
import { board, reloadBoard, resetFilters } from "./board.js";
import { channels } from "./channels.js";
import { newRecordDialog } from "./dialogs.js";
import { h } from "./dom.js";
import { Feedback } from "./forms.js";
import { follow } from "./live.js";
import { openPanel } from "./panel.js";
import { keys, profile, users } from "./people.js";
import { pipeline } from "./pipeline.js";
import * as sessions from "./session.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const VIEWS = {
  contacts: {
    title: "Contacts",
    kind: "contact",
    render: (ctx) => board(ctx, "contact"),
    shown: (s) => sessions.allows(s, "contacts:read"),
  },
  opportunities: {
    title: "Opportunities",
    kind: "opportunity",
    render: (ctx) => board(ctx, "opportunity"),
    shown: (s) => sessions.allows(s, "opportunities:read"),
  },
  pipeline: {
    title: "Pipeline",
    kind: null,
    render: (ctx) => pipeline(ctx),
    shown: (s) => sessions.allows(s, "opportunities:read"),
  },
  users: { title: "Users", kind: null, render: (ctx) => users(ctx), shown: (s) => sessions.allows(s, "users:manage") },
  keys: { title: "Keys", kind: null, render: (ctx) => keys(ctx), shown: (s) => sessions.allows(s, "keys:manage") },
  channels: {
    title: "Channels",
    kind: null,
    render: (ctx) => channels(ctx),
    shown: (s) => sessions.allows(s, "workspace:manage"),
  },
  profile: { title: "Profile", kind: null, render: (ctx) => profile(ctx), shown: (s) => Boolean(s.user) },
};
const workspaceName = document.getElementById("workspace-name");
const switchWorkspace = document.getElementById("switch-workspace");
let session = sessions.load();
let stopFollowing = null;
let current = null; // the open workspace's context (null: none open)
let settingPassword = false; // the "Set password" page is shown
let rendering = 0; // the latest render wins
let routing = false;

function show(...children) {
  main.replaceChildren(...children);
}

function alertBox(message) {
  return h("p", { role: "alert", class: "error" }, message);
}

function field(id, label, attributes = {}) {
  const control = h("input", { id, ...attributes });
  return [h("label", { for: id }, label), control];
}

// The nav while no workspace is open: only "Sign out" (its views need a workspace).
function navWithoutWorkspace() {
  for (const link of nav.querySelectorAll("a[data-view]")) link.hidden = true;
  workspaceName.hidden = true;
  workspaceName.textContent = "";
  switchWorkspace.hidden = true;
}

// Leave the open workspace: its feed stops, a view still loading is not shown, its panels
// and dialogs close, and the boards' search and "Mine" start empty in the next one.
// What the open panels hold unsaved, said when the session ends under them (they close):
// " Not saved: Ana Díaz — Last name “Díaz Ruiz”." so that nothing typed goes unsaid.
function notSaved() {
  const lost = [];
  for (const dialog of document.querySelectorAll("dialog.panel[open]")) {
    const fields = dialog.unsaved ? dialog.unsaved() : [];
    if (fields.length) lost.push(`${dialog.querySelector("h2")?.textContent ?? ""} — ${fields.join(", ")}`);
  }
  return lost.length ? ` Not saved: ${lost.join("; ")}.` : "";
}

function leaveWorkspace() {
  if (stopFollowing) stopFollowing();
  stopFollowing = null;
  current = null;
  rendering += 1;
  resetFilters();
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  navWithoutWorkspace();
}

// Sign in (contract J.3, K.3): a person with Email and Password (and Code when two-factor
// is on); the API key stays as a second way in, behind the "Sign in with an API key" link.
// A key that may not read workspaces (users:manage or keys:manage alone, say) cannot open
// the console, whose every view is a workspace's.
const NO_WORKSPACE_READ =
  "The console opens a workspace first, and this key may not read workspaces (that needs " +
  "contacts:read or opportunities:read). Sign in with a key that has one of them, or manage " +
  "users and keys through the API (docs/api.md section 10).";

function signIn(said, { withKey = false } = {}) {
  // Whichever request met the ended session, what the closing panels held is said.
  const lost = notSaved();
  const message = said || lost ? `${said ?? ""}${lost}`.trim() : said;
  leaveWorkspace();
  settingPassword = false;
  nav.hidden = true;
  const [emailLabel, email] = field("email", "Email", { type: "email", autocomplete: "username" });
  const [passwordLabel, password] = field("password", "Password", {
    type: "password",
    autocomplete: "current-password",
  });
  const [codeLabel, code] = field("code", "Code", { inputmode: "numeric", autocomplete: "one-time-code" });
  const codeRow = h("div", { class: "code", hidden: true }, codeLabel, code);
  const [keyLabel, key] = field("api-key", "API key", { type: "password", autocomplete: "off" });
  const other = h(
    "a",
    {
      href: "#",
      class: "other-way",
      onclick: (event) => {
        event.preventDefault();
        signIn(null, { withKey: !withKey });
      },
    },
    withKey ? "Sign in with e-mail and password" : "Sign in with an API key",
  );
  const fields = withKey ? [keyLabel, key] : [emailLabel, email, passwordLabel, password, codeRow];
  const form = h(
    "form",
    { class: "sign-in", "aria-label": "Sign in", novalidate: true },
    ...fields,
    h("button", { type: "submit" }, "Sign in"),
    message ? alertBox(message) : null,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.querySelector("[role=alert]")?.remove();
    let listing = false; // the workspaces are being read: every view is in one
    try {
      if (withKey) {
        session = { key: key.value.trim(), workspace: null, csrf: null, user: null };
        const me = await call(session, "GET", "/api/me");
        session.scopes = me.key ? me.key.scopes : null;
        session.keyRecord = me.key ?? null; // who made it and its workspaces: people.js
      } else {
        session = { key: null, workspace: null, csrf: null, user: null };
        const body = { email: email.value.trim(), password: password.value };
        if (code.value.trim()) body.code = code.value.trim();
        const started = await call(session, "POST", "/api/session", { body });
        session.csrf = started.csrfToken;
        session.user = started.user;
        sessions.markPerson(true);
      }
      listing = true;
      const found = await call(session, "GET", "/api/workspace");
      sessions.save(session);
      chooseWorkspace(found.data);
    } catch (error) {
      if (error instanceof ApiError && error.code === "TWO_FACTOR_REQUIRED") {
        codeRow.hidden = false;
        code.focus();
      }
      const keyReadsNoWorkspace = listing && withKey && error instanceof ApiError && error.code === "PERMISSION_DENIED";
      session = { key: null, workspace: null, csrf: null, user: null };
      form.append(alertBox(keyReadsNoWorkspace ? NO_WORKSPACE_READ : error.message));
    }
  });
  show(h("h2", {}, "Sign in"), form, h("p", {}, other));
  (withKey ? key : email).focus();
}

// A part of the hash as it was written: one that is not percent-encoding (`%E0%A4%A`) is
// taken as it is (the API then says it is unknown) rather than throw URIError.
function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

// The link of an invitation or a reset (`#invite/<token>`, `#reset/<token>`), or null.
function passwordLink() {
  const link = window.location.hash.match(/^#(invite|reset)\/(.+)$/);
  return link ? { kind: link[1], token: decoded(link[2]) } : null;
}

// Choose a password, and be signed in as that person (whoever this tab was signed in as).
// The API judges the password: its message shows beside the field.
function setPassword(kind, token) {
  leaveWorkspace();
  settingPassword = true;
  nav.hidden = true;
  const [passwordLabel, password] = field("new-password", "Password", {
    type: "password",
    autocomplete: "new-password",
  });
  // A reset link of a two-factor user still takes its code (asked for when the API says).
  const [codeLabel, code] = field("reset-code", "Code", { inputmode: "numeric", autocomplete: "one-time-code" });
  const codeRow = h("div", { class: "field code", hidden: true }, codeLabel, code);
  const feedback = new Feedback();
  const form = h(
    "form",
    { class: "sign-in", novalidate: true },
    h("p", {}, kind === "invite" ? "Welcome! Choose your password (10 characters or more)." : "Choose a new password (10 characters or more)."),
    h("div", { class: "field" }, passwordLabel, password),
    codeRow,
    feedback.slot,
    h("button", { type: "submit" }, "Set password"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    feedback.clear();
    try {
      const body = { token, password: password.value };
      if (code.value.trim()) body.code = code.value.trim();
      const started = await call({}, "POST", "/api/invitation/accept", { body });
      session = { key: null, workspace: null, csrf: started.csrfToken, user: started.user };
      sessions.forget(); // a key this tab held is not this person's
      sessions.markPerson(true);
      settingPassword = false;
      history.replaceState(null, "", window.location.pathname);
      const found = await call(session, "GET", "/api/workspace");
      chooseWorkspace(found.data);
    } catch (error) {
      if (error instanceof ApiError && error.code === "TWO_FACTOR_REQUIRED") {
        codeRow.hidden = false;
        code.focus();
      }
      feedback.error(error, { password });
    }
  });
  const back = h(
    "a",
    {
      href: "#",
      onclick: (event) => {
        event.preventDefault();
        history.replaceState(null, "", window.location.pathname);
        signIn();
      },
    },
    "Back to sign in",
  );
  show(h("h2", {}, "Set password"), form, h("p", {}, back));
  password.focus();
}

// A workspace's name in the chooser; when another of the list has the same name, with
// what tells them apart: the day it was created (when the list says) and the end of its
// id (ids are UUIDv7: their start is the time, the same for workspaces made together).
function workspaceLabel(workspace, all) {
  if (all.filter((w) => w.name === workspace.name).length < 2) return workspace.name;
  const made = workspace.createdAt ? new Date(workspace.createdAt) : null;
  const day = made && !Number.isNaN(made.getTime()) ? `created ${made.toLocaleDateString()}, ` : "";
  return `${workspace.name} (${day}id …${workspace.id.slice(-8)})`;
}

// `notice`: why the choice is shown again (the workspace that was open was refused).
function chooseWorkspace(workspaces, notice = null) {
  leaveWorkspace();
  settingPassword = false;
  nav.hidden = false;
  const pick = (workspace) => {
    session.workspace = workspace.id;
    sessions.save(session);
    openWorkspace();
  };
  show(
    h("h2", {}, "Choose a workspace"),
    ...(notice ? [alertBox(notice)] : []),
    ...(workspaces.length ? [] : [h("p", {}, "No workspace is open to you.")]),
    h(
      "ul",
      { class: "workspaces" },
      workspaces.map((w) => h("li", {}, h("button", { type: "button", onclick: () => pick(w) }, workspaceLabel(w, workspaces)))),
    ),
  );
}

// Back to the workspaces to pick from, still signed in (contract H): "Switch workspace",
// or the open workspace refused (`notice` says so).
async function toChooser(notice = null) {
  leaveWorkspace();
  // A new session object: whatever the last workspace still had loading sees it is stale.
  session = { ...session, workspace: null };
  const picking = session;
  sessions.save(session);
  // The view stays the same; a panel of the last workspace's record does not.
  const { name, id } = currentRoute();
  if (id) history.replaceState(null, "", `#${name}`);
  show(h("p", {}, "Loading…"));
  try {
    const found = await call(session, "GET", "/api/workspace");
    if (session === picking) chooseWorkspace(found.data, notice);
  } catch (error) {
    if (session !== picking) return;
    if (error instanceof ApiError && error.status === 401) return signIn(whyEnded(error));
    show(alertBox(error.message));
  }
}

// Whether a refusal says the caller can no longer use the workspace: a read of it refused
// 403 FORBIDDEN (a changed role is PERMISSION_DENIED) — a person taken out of it, a key
// limited to others. Reads only: a change may be FORBIDDEN for a reason of its own (a new
// key limited to a workspace its maker cannot use).
function refusesWorkspace(error, method) {
  return error instanceof ApiError && error.code === "FORBIDDEN" && method === "GET";
}

// The workspace refused (refusesWorkspace): its data leaves the screen and the workspaces
// still open to the caller are offered, with a notice. `ctx`: the open workspace, one of
// whose reads was refused — confirmed first by the workspace's own read, which is what a
// reload would ask (the feed may be refused for a reason of its own). Without `ctx`: that
// read was the workspace's own (opening it). True when the choice is shown.
async function workspaceRefused(error, method, ctx = null) {
  if (!refusesWorkspace(error, method)) return false;
  if (ctx) {
    if (ctx.confirming) return false;
    ctx.confirming = true;
    try {
      await call(ctx.session, "GET", `/api/workspace/${encodeURIComponent(ctx.session.workspace)}`);
      return false;
    } catch (again) {
      if (!refusesWorkspace(again, "GET") || current !== ctx || ctx.session !== session) return false;
    } finally {
      ctx.confirming = false;
    }
  }
  // The refusal may be another person's: the browser's cookie replaced by a sign-in in
  // another tab. That is said, not "you can no longer use" with their workspaces.
  if (ctx && (await anotherPersonHolds(ctx.session))) return true;
  const which = ctx ? `the workspace “${ctx.workspace.name}”` : "the workspace that was open";
  toChooser(`You can no longer use ${which}: choose another one.`);
  return true;
}

// Whether the browser's session cookie is now another person's than the one this tab
// signed in as (a sign-in in another tab replaced it); then the tab goes to the sign-in,
// which names who signed in there: it must never read or change as them.
async function anotherPersonHolds(asked) {
  if (asked.key || !asked.user) return false;
  let holding;
  try {
    holding = await call({}, "GET", "/api/session");
  } catch {
    return false; // no session: the next request says so
  }
  if (asked !== session || holding.user.id === asked.user.id) return false;
  signedInElsewhere(holding.user);
  return true;
}

function signedInElsewhere(user) {
  signIn(`${user.name} (${user.email}) signed in in another tab of this browser: sign in again to go on here.`);
}

// The refusals that say the caller is no longer signed in.
const ENDED = new Set(["SESSION_EXPIRED", "UNAUTHORIZED"]);

// What the sign-in says after a 401: the API's message, but a person's request that
// carried no cookie at all (a sign-out in another tab of this browser cleared it, or the
// browser dropped it when the session expired) is answered about the API key it lacks,
// which this person never used.
function whyEnded(error) {
  if (error.code !== "UNAUTHORIZED" || session.key || !session.user) return error.message;
  return "This browser no longer holds your session (signed out in another tab, or ended): sign in again.";
}
const VIEW_RETRY = 2000; // ms before a view whose read failed (and may pass) is read again

// What every view, panel and dialog is given.
function context(workspace) {
  const ctx = {
    session,
    workspace, // GET /api/workspace/{id}: stages, tags, agents, segmentations
    call: async (method, path, options) => {
      try {
        return await call(session, method, path, options);
      } catch (refused) {
        let error = refused;
        // Refused before it was done: sent again with the token of the session now held
        // (a read was, by api.js).
        const read = method === "GET" || method === "HEAD";
        if (!read && (await sessionRenewed(refused))) {
          try {
            return await call(session, method, path, options);
          } catch (again) {
            error = again;
          }
        }
        ctx.ended(error, method);
        ctx.refusedByRole(error);
        throw error;
      }
    },
    // A session ended elsewhere (signed out, disabled, its sessions ended) or a key revoked,
    // seen by any request of the workspace's views or its feed: back to the sign-in, with
    // the API's message, rather than a board that no longer follows and panels that fail.
    // The workspace refused to a read (`method`; the feed's polls are reads): back to the
    // choice of workspace (workspaceRefused).
    ended: (error, method = "GET") => {
      if (current !== ctx || ctx.session !== session) return;
      if (error instanceof ApiError && ENDED.has(error.code)) signIn(whyEnded(error));
      else workspaceRefused(error, method, ctx);
    },
    // A permission refused that the console offered: the person's role may have changed
    // since they signed in (K.3: controls a role does not allow are not shown). It is
    // read again, and the nav and the view follow it.
    refusedByRole: async (error) => {
      if (!(error instanceof ApiError && error.code === "PERMISSION_DENIED") || !session.user) return;
      const asked = session;
      try {
        const current = await call(session, "GET", "/api/session");
        if (asked !== session) return;
        // Another person's session now (a sign-in in another tab), not this one's new role.
        if (current.user.id !== session.user.id) {
          await anotherPersonHolds(asked);
          return;
        }
        if (current.user.role === session.user.role) return;
        session.user = current.user;
        offerViews();
        // An open panel offered the old role's controls: the hash's record is opened again
        // for the new role (its refusal said in the view), the others closed.
        const { name, id } = currentRoute();
        const panels = [...document.querySelectorAll("dialog.panel[open]")];
        const lost = notSaved(); // what was typed there is said, as when a session ends
        for (const panel of panels) panel.close();
        const reopen = Boolean(panels.length && id && VIEWS[name]?.kind);
        if (reopen) history.replaceState(null, "", `#${name}/${encodeURIComponent(id)}`);
        // Drawn again for the new role, the view keeps the refusal's message (a drag's).
        render(ctx, { notice: `${error.message}${lost}`, route: reopen });
      } catch {
        // the next request says what is wrong
      }
    },
    // The workspace (stages, agents, segmentations, tags) read again, in place: a record
    // named one added elsewhere since it was opened (panel-parts.js readRecord).
    readWorkspace: async () => {
      const fresh = await call(session, "GET", `/api/workspace/${session.workspace}`);
      if (ctx.session === session) Object.assign(ctx.workspace, fresh);
    },
    // The current view again after a save: a board read again in place (the cards loaded
    // with "Load more", the scroll and the focus kept), another view drawn again.
    refresh: () => reloadBoard(ctx) ?? render(ctx),
    redraw: () => render(ctx),
    openPanel: (kind, id) => routed(kind, id, openPanel(ctx, kind, id)),
    newRecord: (kind) => newRecordDialog(ctx, kind),
    // Views subscribe to the events feed's pages here (live.js calls them).
    listeners: new Set(),
    view: null,
  };
  return ctx;
}

// A request refused CSRF_FAILED (or SESSION_EXPIRED): the browser's cookie may hold
// another session than the one this tab signed in with (the person signed in again in
// another tab, or someone else did). The same person: its token is taken and returned,
// and the request may be sent again. Another person: this tab must not act or read as
// them under this one's controls, so it goes to the sign-in, which says who holds the
// browser now (null). No session at all: the sign-in says so (null).
async function sessionRenewed(error) {
  if (!(error instanceof ApiError && REPLACED.has(error.code)) || session.key) return null;
  const asked = session;
  let holding;
  try {
    holding = await call({}, "GET", "/api/session");
  } catch (failed) {
    if (asked === session && failed instanceof ApiError && ENDED.has(failed.code)) signIn(whyEnded(failed));
    return null;
  }
  if (asked !== session) return null;
  if (session.user && holding.user.id === session.user.id) {
    session.csrf = holding.csrfToken;
    return holding.csrfToken;
  }
  signedInElsewhere(holding.user);
  return null;
}

onSessionReplaced(sessionRenewed);

// The hash names a view, and may name a record of it whose panel is open: `#contacts/<id>`.
// A view the caller may not open (a key without contacts:read, say) is never the one shown:
// the first it may open is.
function offered(name) {
  const view = VIEWS[name];
  return Boolean(view) && (!view.shown || !session?.workspace || view.shown(session));
}

function currentRoute() {
  const [name, id] = window.location.hash.replace(/^#/, "").split("/");
  if (!offered(name)) return { name: Object.keys(VIEWS).find(offered) ?? "contacts", id: null };
  return { name, id: id ? decoded(id) : null };
}

function currentView() {
  return currentRoute().name;
}

// A panel of the current view's kind is named in the hash while it is open (a link to it);
// replaceState, not a hash assignment: the board under it need not be drawn again.
function routed(kind, id, panel) {
  const name = currentView();
  if (!panel || VIEWS[name].kind !== kind) return panel;
  const hash = `#${name}/${encodeURIComponent(id)}`;
  if (window.location.hash !== hash) history.replaceState(null, "", hash);
  panel.addEventListener("close", () => {
    if (window.location.hash === hash) history.replaceState(null, "", `#${name}`);
  });
  return panel;
}

// `route`: the hash was followed (not a refresh), so the panel it names is opened — by
// this render, or by a later one that wins over it.
// `notice`: a message to show above the view (the refusal that made it drawn again).
async function render(ctx, { route = false, notice = null } = {}) {
  // A workspace signed out of or left (a late refresh: a panel closing as the sign-in
  // page opens asks for one, which would answer 401 and draw the sign-in again).
  if (ctx.session !== session || current !== ctx) return;
  const { name, id } = currentRoute();
  const view = VIEWS[name];
  const turn = ++rendering;
  routing ||= route;
  for (const link of nav.querySelectorAll("a[data-view]")) {
    if (link.dataset.view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  try {
    const content = await view.render(ctx);
    if (turn !== rendering || ctx.session !== session) return; // a later render won, or signed out
    ctx.view = name;
    const heading = h("div", { class: "toolbar" }, h("h2", {}, view.title));
    if (view.kind && sessions.writes(session, view.kind)) {
      const label = view.kind === "contact" ? "New contact" : "New opportunity";
      heading.append(h("button", { type: "button", onclick: () => ctx.newRecord(view.kind) }, label));
    }
    show(heading, ...(notice ? [alertBox(notice)] : []), content);
    if (routing && id && view.kind) ctx.openPanel(view.kind, id);
    routing = false;
  } catch (error) {
    if (turn !== rendering || ctx.session !== session) return;
    if (error instanceof ApiError && error.status === 401) return signIn(whyEnded(error));
    show(alertBox(error.message));
    // A failure that may pass (the server restarting, out of reach a moment): the view is
    // read again until it comes, unless another render or a sign-out came first.
    if (passing(error)) setTimeout(() => turn === rendering && render(ctx, { notice }), VIEW_RETRY);
  }
}

// Views the caller's role or key does not allow are not offered (the API refuses them
// anyway); the views themselves leave out the controls it does not allow.
function offerViews() {
  for (const link of nav.querySelectorAll("a[data-view]")) {
    const shown = VIEWS[link.dataset.view].shown;
    link.hidden = shown ? !shown(session) : false;
  }
}

async function openWorkspace() {
  leaveWorkspace(); // whatever was open before: its feed, panels and filters
  // Signing out while the workspace loads replaces `session`: what was being opened is then
  // dropped, not laid out with no credentials (its feed and board would be refused).
  const opening = session;
  nav.hidden = false;
  show(h("p", {}, "Loading…"));
  let workspace;
  try {
    workspace = await call(session, "GET", `/api/workspace/${session.workspace}`);
  } catch (error) {
    if (session !== opening) return;
    if (error instanceof ApiError && error.status === 401) return signIn(whyEnded(error));
    if (refusesWorkspace(error, "GET")) return workspaceRefused(error, "GET");
    return show(alertBox(error.message));
  }
  if (session !== opening) return;
  workspaceName.textContent = workspace.name;
  workspaceName.hidden = false;
  switchWorkspace.hidden = false;
  offerViews();
  const ctx = context(workspace);
  current = ctx;
  stopFollowing = follow(ctx);
  await render(ctx, { route: true });
}

switchWorkspace.addEventListener("click", () => toChooser());

document.getElementById("sign-out").addEventListener("click", async () => {
  const leaving = session;
  sessions.forget();
  session = { key: null, workspace: null, csrf: null, user: null };
  leaveWorkspace(); // a view still loading is not shown
  signIn(!leaving.key && leaving.csrf ? await endSession(leaving) : undefined);
});

// "Sign out" ends the session the browser's cookie holds: if another tab signed in since
// (another person, say), that session's CSRF token is read and it is ended, rather than
// the refusal taken for "signed out" while the browser stays signed in. What could not be
// ended is said (undefined: signed out).
async function endSession(leaving) {
  try {
    await call(leaving, "DELETE", "/api/session");
    return undefined;
  } catch (error) {
    if (error instanceof ApiError && ENDED.has(error.code)) return undefined; // already ended
    if (!(error instanceof ApiError && error.code === "CSRF_FAILED")) return notSignedOut(error);
  }
  try {
    const holding = await call({}, "GET", "/api/session");
    await call({ key: null, csrf: holding.csrfToken }, "DELETE", "/api/session");
    return undefined;
  } catch (error) {
    return error instanceof ApiError && ENDED.has(error.code) ? undefined : notSignedOut(error);
  }
}

function notSignedOut(error) {
  sessions.markPerson(true); // the cookie may still hold a session: a reload looks
  return `Not signed out: ${error.message} The session may still be open: sign out again.`;
}

// A person's session (the cookie) survives a reload: its CSRF token is asked for again.
async function resume() {
  if (!sessions.maybePerson()) return false;
  try {
    const current = await answered(() => call({}, "GET", "/api/session"));
    session.csrf = current.csrfToken;
    session.user = current.user;
    return true;
  } catch {
    sessions.markPerson(false); // the server said there is no session (401)
    return false;
  }
}

// A first read of the page that failed and may pass (429, 5xx, the server out of reach)
// is said in words and tried again, never taken as "not signed in": a reload during a
// burst of requests kept the person signed out of a session that was still valid.
async function answered(read) {
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (!passing(error)) throw error;
      nav.hidden = true;
      show(alertBox(`${error.message} Trying again…`));
      await new Promise((resolve) => setTimeout(resolve, VIEW_RETRY));
    }
  }
}

// The hash moved: an invitation or reset link followed in this tab (same-document
// navigation: no page load), a view or panel of the open workspace, or away from the "Set
// password" page (Back), which then starts as a fresh page does.
window.addEventListener("hashchange", () => {
  const link = passwordLink();
  if (link) return setPassword(link.kind, link.token);
  if (current && current.session === session) {
    // A link followed (or Back) leaves the panels open before it: the hash's one, if it
    // names one, is opened in their place, as a page would be.
    for (const panel of document.querySelectorAll("dialog.panel[open]")) panel.close();
    return render(current, { route: true });
  }
  if (settingPassword) start();
});

async function start() {
  settingPassword = false;
  session = sessions.load();
  const link = passwordLink();
  if (link) return setPassword(link.kind, link.token);
  if (session.key) {
    try {
      const me = await answered(() => call(session, "GET", "/api/me"));
      session.scopes = me.key ? me.key.scopes : null;
      session.keyRecord = me.key ?? null;
    } catch {
      return signIn();
    }
  } else if (!(await resume())) {
    return signIn();
  }
  if (!session.workspace) {
    return answered(() => call(session, "GET", "/api/workspace")).then(
      (f) => chooseWorkspace(f.data),
      (error) => signIn(error.message),
    );
  }
  openWorkspace();
}

start();
