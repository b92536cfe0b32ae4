// The console's flow: sign in with an API key, pick a workspace, work on its board.
import { ApiError, call } from "./api.js";
import { contactsBoard } from "./board.js";
import { h } from "./dom.js";
import * as sessions from "./session.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let session = sessions.load();

function show(...children) {
  main.replaceChildren(...children);
}

function alertBox(message) {
  return h("p", { role: "alert", class: "error" }, message);
}

function signIn(message) {
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
    openBoard();
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

async function openBoard() {
  nav.hidden = false;
  show(h("p", {}, "Loading…"));
  try {
    const workspace = await call(session, "GET", `/api/workspace/${session.workspace}`);
    document.getElementById("workspace-name").textContent = workspace.name;
    show(h("h2", {}, "Contacts"), await contactsBoard(session, workspace));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn(error.message);
    show(alertBox(error.message));
  }
}

document.getElementById("sign-out").addEventListener("click", () => {
  sessions.forget();
  session = { key: null, workspace: null };
  signIn();
});

if (!session.key) signIn();
else if (!session.workspace) call(session, "GET", "/api/workspace").then((f) => chooseWorkspace(f.data), () => signIn());
else openBoard();
