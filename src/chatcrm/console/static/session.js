// Who is signed in, kept in this tab's sessionStorage only: an API key (the second way
// in), or nothing but the chosen workspace when a person signed in with e-mail and
// password — that session lives in an HttpOnly cookie the page cannot read, and its CSRF
// token is asked for again (GET /api/session) when the page loads.
const KEY = "chatcrm.key";
const WORKSPACE = "chatcrm.workspace";

export function load() {
  return { key: sessionStorage.getItem(KEY), workspace: sessionStorage.getItem(WORKSPACE), csrf: null, user: null };
}

// Whether a person signed in here: a marker, not a secret (the session is the cookie), so
// that a fresh page asks the server only when there may be a session to resume.
const PERSON = "chatcrm.person";

export function markPerson(signedIn) {
  if (signedIn) localStorage.setItem(PERSON, "1");
  else localStorage.removeItem(PERSON);
}

export function maybePerson() {
  return localStorage.getItem(PERSON) === "1";
}

export function save(session) {
  for (const [name, value] of [[KEY, session.key], [WORKSPACE, session.workspace]]) {
    if (value) sessionStorage.setItem(name, value);
    else sessionStorage.removeItem(name);
  }
}

export function forget() {
  localStorage.removeItem(PERSON);
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(WORKSPACE);
}

// What the caller may do (contract J.2): a person's role, or a key's scopes.
const ROLE_SCOPES = {
  viewer: ["read"],
  agent: ["read", "write"],
  admin: ["read", "write", "delete", "manage"],
  owner: ["read", "write", "delete", "manage"],
};

export function can(session, what) {
  if (session.user) return ROLE_SCOPES[session.user.role].includes(what);
  if (!session.scopes || session.scopes.includes("*")) return true;
  const needed = { read: ":read", write: ":write", delete: ":delete", manage: ":manage" }[what];
  return session.scopes.some((s) => s.endsWith(needed));
}

// Whether the caller holds one named scope (contract J.2): a person by its role, a key by
// its scopes. `can` answers for a kind of action; this for one scope, e.g. messages:write.
export function allows(session, scope) {
  if (session.user) {
    if (scope === "audit:read") return can(session, "manage");
    const kind = scope.slice(scope.indexOf(":") + 1);
    return can(session, kind);
  }
  if (!session.scopes || session.scopes.includes("*")) return true;
  return session.scopes.includes(scope);
}
