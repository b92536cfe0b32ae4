// The JSON API, as the console calls it: an API key as a Bearer header, or a person's
// session cookie with its CSRF token; the workspace in x-workspace-id; the envelope's
// `data` on success, its message on failure.
const root = document.querySelector("script[data-root]").dataset.root;

export class ApiError extends Error {
  constructor(body, status) {
    super(body.message || `HTTP ${status}`);
    this.status = status;
    this.code = body.errorCode || null;
    this.errors = (body.data && body.data.errors) || [];
    this.data = body.data || null; // e.g. a duplicate's `existingId`
  }
}

export const UNREACHABLE =
  "The server cannot be reached: check the network connection, then try again.";

// Whether a failure may pass by itself (the server out of reach, restarting, or busy for a
// moment): a read that failed so is tried again.
export function passing(error) {
  return !(error instanceof ApiError) || error.status === 0 || error.status === 429 || error.status >= 500;
}

// The key (or the session's CSRF token) and the workspace. A change needs the token
// (J.3); a read carries it too, so that the server refuses it (CSRF_FAILED) when the
// cookie now holds another session — a sign-in in another tab — rather than answering as
// that session, another person's perhaps (docs/api.md 10.3).
function credentialsOf(session, headers) {
  if (session.key) headers.Authorization = `Bearer ${session.key}`;
  else if (session.csrf) headers["X-CSRF-Token"] = session.csrf;
  if (session.workspace) headers["x-workspace-id"] = session.workspace;
  return headers;
}

// Money (section 0: exact decimals) is kept as the digits the API wrote: a float would
// change some amounts (622051690711.0003 reads as …0002). JSON.parse's reviver sees each
// number's source text where the browser gives it (else the number, as before).
const MONEY_KEYS = new Set(["amount", "finalAmount", "totalAmount"]);

function exactMoney(key, value, context) {
  if (typeof value === "number" && MONEY_KEYS.has(key) && context && typeof context.source === "string") {
    return context.source;
  }
  return value;
}

async function envelopeOf(response) {
  try {
    return JSON.parse(await response.text(), exactMoney);
  } catch {
    return { message: `HTTP ${response.status}` };
  }
}

// Options: `query`, `body`, `headers` (sent besides the key and workspace, e.g. If-Match or
// Idempotency-Key), `withEtag` (answer `{data, etag}`: the record's version, for If-Match),
// `signal` (an AbortSignal: the events feed's long poll is cut short on sign-out).
// What the console does when a read is refused for a session the browser's cookie may no
// longer hold (app.js): the same person's new session's token (the read goes again with
// it), or null after going to the sign-in (naming who holds the browser now, or saying
// the session ended).
let renewSession = async () => null;
export function onSessionReplaced(renew) {
  renewSession = renew;
}

// The refusals of a request sent for a session the cookie may no longer hold: another
// session's token (CSRF_FAILED), or a session ended after a sign-in in another tab had
// replaced it (SESSION_EXPIRED: a long poll sent with the old cookie answers so).
export const REPLACED = new Set(["CSRF_FAILED", "SESSION_EXPIRED"]);

// `read` again with the session's new token when it was refused for the old one. The
// caller's session object takes the token too (the events feed keeps a copy of its own).
async function renewing(session, read) {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ApiError && REPLACED.has(error.code) && session.csrf)) throw error;
    const token = await renewSession(error);
    if (!token) throw error;
    session.csrf = token;
    return read();
  }
}

export async function call(session, method, path, options = {}) {
  if (method !== "GET" && method !== "HEAD") return sent(session, method, path, options);
  return renewing(session, () => sent(session, method, path, options));
}

async function sent(session, method, path, { query, body, headers: extra, withEtag, signal } = {}) {
  const url = new URL(root + path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  const headers = credentialsOf(session, { Accept: "application/json" });
  if (body !== undefined) headers["Content-Type"] = "application/json";
  Object.assign(headers, extra || {});
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      signal,
      body: body === undefined ? undefined : JSON.stringify(body),
      // A key never travels with a cookie; a person's session is the cookie.
      credentials: session.key ? "omit" : "same-origin",
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    // The browser's own words ("Failed to fetch") tell a person nothing they can act on.
    throw new ApiError({ message: UNREACHABLE, errorCode: "UNREACHABLE" }, 0);
  }
  const envelope = await envelopeOf(response);
  if (!response.ok || !envelope.success) throw new ApiError(envelope, response.status);
  if (withEtag) return { data: envelope.data, etag: response.headers.get("ETag") };
  return envelope.data;
}

// Every record of a list, following its continuation tokens.
export async function every(session, path, query) {
  const out = [];
  let token = null;
  do {
    const page = await call(session, "GET", path, {
      query: { ...query, pageSize: 100, continuationToken: token },
    });
    out.push(...page.data);
    token = page.continuationToken;
  } while (token);
  return out;
}

// The URL of an API path, as a link in the page shows it.
export function apiUrl(path) {
  return new URL(root + path, window.location.origin).href;
}

// Bytes the API answers as they are (a message's media, K.1): `{blob, headers}`, the
// headers saying how the server would show them (Content-Type, Content-Disposition); the
// envelope's message when it refuses.
export async function bytes(session, path) {
  return renewing(session, async () => {
    const response = await fetch(apiUrl(path), {
      headers: credentialsOf(session, {}),
      credentials: session.key ? "omit" : "same-origin",
    });
    if (!response.ok) {
      throw new ApiError(await envelopeOf(response), response.status);
    }
    return { blob: await response.blob(), headers: response.headers };
  });
}
