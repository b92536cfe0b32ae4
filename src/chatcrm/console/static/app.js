// The console's flow: sign in with an API key, pick a workspace, then its views — the
// contacts board, the opportunities board and the pipeline — chosen in the nav and kept in
// the URL's hash. Each view gets the same context (`ctx`, below).
import { ApiError, call } from "./api.js";
import { board } from "./board.js";
import { newRecordDialog } from "./dialogs.js";
import { h } from "./dom.js";
import { follow } from "./live.js";
import { openPanel } from "./panel.js";
import { pipeline } from "./pipeline.js";
import * as sessions from "./session.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const VIEWS = {
  contacts: { title: "Contacts", kind: "contact", render: (ctx) => board(ctx, "contact") },
  opportunities: {
    title: "Opportunities",
    kind: "opportunity",
    render: (ctx) => board(ctx, "opportunity"),
  },
  pipeline: { title: "Pipeline", kind: null, render: (ctx) => pipeline(ctx) },
};
let session = sessions.load();
let stopFollowing = null;

function show(...children) {
  main.replaceChildren(...children);
}

function alertBox(message) {
  return h("p", { role: "alert", class: "error" }, message);
}

function signIn(message) {
  if (stopFollowing) stopFollowing();
  stopFollowing = null;
  nav.hidden = true;
  const input = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true });
  const form = h(
    "form",
    { class: "sign-in", "aria-label": "Sign in" },
    h("label", { for: "api-key" }, "API key"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    message ? alertBox(message) : null,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    session = { key: input.value.trim(), workspace: null };
    try {
      const found = await call(session, "GET", "/api/workspace");
      sessions.save(session);
      chooseWorkspace(found.data);
    } catch (error) {
      session = { key: null, workspace: null };
      signIn(error.message);
    }
  });
  show(h("h2", {}, "Sign in"), form);
  input.focus();
}

function chooseWorkspace(workspaces) {
  nav.hidden = false;
  const pick = (workspace) => {
    session.workspace = workspace.id;
    sessions.save(session);
    openWorkspace();
  };
  show(
    h("h2", {}, "Choose a workspace"),
    h(
      "ul",
      { class: "workspaces" },
      workspaces.map((w) => h("li", {}, h("button", { type: "button", onclick: () => pick(w) }, w.name))),
    ),
  );
}

// What every view, panel and dialog is given.
function context(workspace) {
  const ctx = {
    session,
    workspace, // GET /api/workspace/{id}: stages, tags, agents, segmentations
    call: (method, path, options) => call(session, method, path, options),
    // Render the current view again (after a save, or when the events feed says so).
    refresh: () => render(ctx),
    openPanel: (kind, id) => routed(kind, id, openPanel(ctx, kind, id)),
    newRecord: (kind) => newRecordDialog(ctx, kind),
    // Views subscribe to the events feed's pages here (live.js calls them).
    listeners: new Set(),
    view: null,
  };
  return ctx;
}

// The hash names a view, and may name a record of it whose panel is open: `#contacts/<id>`.
function currentRoute() {
  const [name, id] = window.location.hash.replace(/^#/, "").split("/");
  if (!VIEWS[name]) return { name: "contacts", id: null };
  return { name, id: id ? decodeURIComponent(id) : null };
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

let rendering = 0;
let routing = false;

// `route`: the hash was followed (not a refresh), so the panel it names is opened — by
// this render, or by a later one that wins over it.
async function render(ctx, { route = false } = {}) {
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
    if (turn !== rendering) return; // a later render won
    ctx.view = name;
    const heading = h("div", { class: "toolbar" }, h("h2", {}, view.title));
    if (view.kind) {
      const label = view.kind === "contact" ? "New contact" : "New opportunity";
      heading.append(h("button", { type: "button", onclick: () => ctx.newRecord(view.kind) }, label));
    }
    show(heading, content);
    if (routing && id && view.kind) ctx.openPanel(view.kind, id);
    routing = false;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn(error.message);
    show(alertBox(error.message));
  }
}

async function openWorkspace() {
  nav.hidden = false;
  show(h("p", {}, "Loading…"));
  let workspace;
  try {
    workspace = await call(session, "GET", `/api/workspace/${session.workspace}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn(error.message);
    return show(alertBox(error.message));
  }
  document.getElementById("workspace-name").textContent = workspace.name;
  const ctx = context(workspace);
  window.onhashchange = () => render(ctx, { route: true });
  if (stopFollowing) stopFollowing();
  stopFollowing = follow(ctx);
  await render(ctx, { route: true });
}

document.getElementById("sign-out").addEventListener("click", () => {
  sessions.forget();
  session = { key: null, workspace: null };
  window.onhashchange = null;
  signIn();
});

if (!session.key) signIn();
else if (!session.workspace) call(session, "GET", "/api/workspace").then((f) => chooseWorkspace(f.data), () => signIn());
else openWorkspace();
