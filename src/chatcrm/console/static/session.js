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

// What the caller may do (contract J.2): a person by its role's scopes, a key by its own
// (`["*"]`, or none known: every scope). One scope at a time — e.g. a key holding
// webhooks:manage is not offered the Users page, which needs users:manage.
const READS = ["contacts:read", "opportunities:read", "messages:read", "events:read"];
const WRITES = ["contacts:write", "opportunities:write", "messages:write"];
const EVERY = [
  ...READS,
  ...WRITES,
  "contacts:delete",
  "opportunities:delete",
  "workspace:manage",
  "webhooks:manage",
  "users:manage",
  "keys:manage",
  "audit:read",
];
const ROLE_SCOPES = { owner: EVERY, admin: EVERY, agent: [...READS, ...WRITES], viewer: READS };

export function allows(session, scope) {
  if (session.user) return (ROLE_SCOPES[session.user.role] || []).includes(scope);
  if (!session.scopes || session.scopes.includes("*")) return true;
  return session.scopes.includes(scope);
}

// Whether the caller holds every scope of a role: giving it, or a reset link to a user who
// has it, needs them all (docs/api.md 10.1).
export function holdsRole(session, role) {
  return (ROLE_SCOPES[role] || []).every((scope) => allows(session, scope));
}

// Whether the caller may change records of a kind ("contact" or "opportunity").
export function writes(session, kind) {
  return allows(session, kind === "opportunity" ? "opportunities:write" : "contacts:write");
}
