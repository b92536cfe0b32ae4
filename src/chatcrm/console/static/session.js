// The signed-in key and the chosen workspace, kept in this tab's sessionStorage only.
const KEY = "chatcrm.key";
const WORKSPACE = "chatcrm.workspace";

export function load() {
  return { key: sessionStorage.getItem(KEY), workspace: sessionStorage.getItem(WORKSPACE) };
}

export function save(session) {
  for (const [name, value] of [[KEY, session.key], [WORKSPACE, session.workspace]]) {
    if (value) sessionStorage.setItem(name, value);
    else sessionStorage.removeItem(name);
  }
}

export function forget() {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(WORKSPACE);
}
