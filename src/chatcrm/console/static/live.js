// Live updates (contract H, K.3): changes made elsewhere — another tab, a bot, a WhatsApp
// message — reach the views through the events feed (D.2), long-polled with `wait`. Each
// page of contact, opportunity and message events goes to every callback in
// `ctx.listeners` (and, for an agent, a sweep now and then: SWEEP). Returns how to stop. A caller without `events:read` is not followed: its
// views show what they load, and a reload brings the rest.
import { ApiError, call } from "./api.js";
import { allows } from "./session.js";

const WAIT = 25; // seconds the server holds a poll when nothing is new
const BACK_OFF = 2000; // ms to wait after an error before polling again
// What an agent may see can change with no event it may read: a contact reassigned away
// from an assigned-only agent takes its events out of that agent's feed, the change that
// hid it included (docs/api.md 10.5), and so does the workspace's setting turned on. So an
// agent's views look again this often while the tab is shown: each listener is called with
// no events and `swept` true, compares what it shows with what the API answers now, and
// draws again only what differs (contract H: within 2 s).
const SWEEP = 1500;

// The feed's current end (`after=end`, docs/api.md 2.23): the `after` from which only new
// events follow. Null when the workspace has none yet — then a poll without `after` (from
// the oldest retained event) answers only events that are new.
async function end(session, types, signal) {
  const page = await call(session, "GET", "/api/events", {
    query: { types, pageSize: 1, after: "end" },
    signal,
  });
  return page.next;
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function tell(ctx, events, swept = false) {
  for (const listener of [...ctx.listeners]) {
    try {
      listener(events, swept);
    } catch (error) {
      console.error(error);
    }
  }
}

export function follow(ctx) {
  if (!allows(ctx.session, "events:read")) return () => {};
  const controller = new AbortController();
  const { signal } = controller;
  const session = { ...ctx.session }; // this workspace, even if the tab's session moves on
  // Message events only for a caller who may read messages (a key may not).
  const types = ["contact.*", "opportunity.*"];
  if (allows(session, "messages:read")) types.push("message.*");
  const typeList = types.join(",");

  async function run() {
    let after;
    let known = false; // whether `after` is the end of the feed
    while (!signal.aborted) {
      try {
        if (!known) {
          after = await end(session, typeList, signal);
          known = true;
        }
        const page = await call(session, "GET", "/api/events", {
          query: { types: typeList, pageSize: 100, wait: WAIT, after },
          signal,
        });
        after = page.next ?? after;
        if (page.events.length) tell(ctx, page.events);
      } catch (error) {
        if (signal.aborted) return;
        // Signed out elsewhere (401: the console goes back to its sign-in), or the feed is
        // not this caller's to read (403: a key without events:read, or limited
        // otherwise): asking again would be refused again.
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          ctx.ended(error);
          return;
        }
        // A cursor no longer retained (or not known): start again from the end.
        if (error instanceof ApiError && error.status === 400) known = false;
        await pause(BACK_OFF, signal);
      }
    }
  }

  async function sweep() {
    while (!signal.aborted) {
      await pause(SWEEP, signal);
      if (!signal.aborted && document.visibilityState === "visible") tell(ctx, [], true);
    }
  }

  run();
  if (session.user?.role === "agent") sweep();
  return () => controller.abort();
}
