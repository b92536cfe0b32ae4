// The people pages (contract K.3's people parts): Users and Keys for owners and admins,
// Profile for a signed-in person (password, two-factor with its QR code, sessions).
import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { Feedback, time } from "./forms.js";

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

// A form whose submit runs `action`; its answer shows below it. A refusal shows the API's
// message below it, and each field's message next to its control (`controls`: the body's
// field names → their controls), as in every other form of the console.
function form(label, children, submit, action, controls = {}) {
  const feedback = new Feedback();
  const element = h("form", { class: "people-form", "aria-label": label }, ...children,
    feedback.slot, h("button", { type: "submit" }, submit));
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    feedback.clear();
    element.querySelectorAll("[role=alert],[role=status]").forEach((n) => n.remove());
    try {
      const shown = await action();
      if (shown) element.append(shown);
    } catch (error) {
      if (error instanceof ApiError) feedback.error(error, controls);
      else element.append(note(String(error), "alert"));
    }
  });
  return element;
}

// --- users -------------------------------------------------------------------------------

export async function users(ctx) {
  const listed = (await ctx.call("GET", "/api/user")).data;
  const spaces = (await ctx.call("GET", "/api/workspace")).data;
  const spaceBoxes = spaces.map((w) => {
    const box = h("input", { type: "checkbox", value: w.id, id: `ws-${w.id}`,
      checked: w.id === ctx.session.workspace });
    return h("label", { for: box.id, class: "scope" }, box, w.name);
  });
  const owner = ctx.session.user ? ctx.session.user.role === "owner" : true;
  const email = h("input", { type: "email", required: true });
  const name = h("input", { required: true });
  const role = h("select", {}, ROLES.filter((r) => owner || r !== "owner").map((r) =>
    h("option", { value: r }, r)));
  role.value = "agent";
  const invite = form("Invite a user", [row("invite-email", "Email", email),
    row("invite-name", "Name", name), row("invite-role", "Role", role),
    h("fieldset", {}, h("legend", {}, "Workspaces (agents and viewers)"), spaceBoxes)], "Invite", async () => {
    const workspaceIds = spaceBoxes.map((b) => b.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    const made = await ctx.call("POST", "/api/user", {
      body: { email: email.value.trim(), name: name.value.trim(), role: role.value, workspaceIds },
    });
    return note(`Invitation link (send it to ${made.user.email}): ${made.inviteUrl}`);
  }, { email, name, role, workspaceIds: spaceBoxes[0]?.closest("fieldset") });
  const table = h("table", { class: "people" },
    h("thead", {}, h("tr", {}, ["Name", "Email", "Role", "Status", ""].map((t) => h("th", {}, t)))),
    h("tbody", {}, listed.map((user) => userRow(ctx, user, owner))));
  return h("section", { "aria-label": "Users" }, table, h("h3", {}, "Invite"), invite);
}

function userRow(ctx, user, owner) {
  const locked = !owner && user.role === "owner";
  const role = h("select", { "aria-label": `Role of ${user.name}`, disabled: locked },
    ROLES.filter((r) => owner || r !== "owner" || r === user.role).map((r) =>
      h("option", { value: r }, r)));
  role.value = user.role;
  const status = h("span", {}, user.status);
  const actions = h("td", {});
  const change = async (body) => {
    try {
      await ctx.call("PUT", `/api/user/${user.id}`, { body });
      ctx.refresh();
    } catch (error) {
      actions.append(note(error.message, "alert"));
    }
  };
  role.addEventListener("change", () => change({ role: role.value }));
  if (!locked) {
    if (user.status === "disabled") {
      actions.append(h("button", { type: "button", onclick: () => change({ status: "active" }) }, "Enable"));
    } else {
      actions.append(h("button", { type: "button", onclick: () => change({ status: "disabled" }) }, "Disable"));
    }
    actions.append(h("button", {
      type: "button",
      onclick: async () => {
        try {
          const made = await ctx.call("POST", `/api/user/${user.id}/reset-link`, { body: {} });
          actions.append(note(`Reset link: ${made.resetUrl}`));
        } catch (error) {
          actions.append(note(error.message, "alert"));
        }
      },
    }, "Reset link"));
  }
  return h("tr", {}, h("td", {}, user.name), h("td", {}, user.email), h("td", {}, role),
    h("td", {}, status), actions);
}

// --- keys --------------------------------------------------------------------------------

export async function keys(ctx) {
  const listed = (await ctx.call("GET", "/api/key")).data;
  const name = h("input", { required: true });
  const boxes = SCOPES.map((scope) => {
    const box = h("input", { type: "checkbox", value: scope, id: `scope-${scope}` });
    return h("label", { for: box.id, class: "scope" }, box, scope);
  });
  const create = form("Create a key", [row("key-name", "Name", name),
    h("fieldset", {}, h("legend", {}, "Scopes"), boxes)], "Create key", async () => {
    const scopes = boxes.map((b) => b.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    const made = await ctx.call("POST", "/api/key", { body: { name: name.value.trim(), scopes } });
    return note(`New key (shown this once): ${made.apiKey}`);
  }, { name, scopes: boxes[0]?.closest("fieldset") });
  const table = h("table", { class: "people" },
    h("thead", {}, h("tr", {}, ["Name", "Scopes", "Created", "Last used", ""].map((t) => h("th", {}, t)))),
    h("tbody", {}, listed.map((key) => h("tr", {},
      h("td", {}, key.name || "(no name)"), h("td", {}, key.scopes.join(", ")),
      h("td", {}, time(key.createdAt)), h("td", {}, key.lastUsedAt ? time(key.lastUsedAt) : "never"),
      h("td", {}, key.revokedAt ? "revoked" : h("button", {
        type: "button",
        onclick: async () => {
          await ctx.call("DELETE", `/api/key/${key.id}`);
          ctx.refresh();
        },
      }, "Revoke"))))));
  return h("section", { "aria-label": "Keys" }, table, h("h3", {}, "New key"), create);
}

// --- profile -----------------------------------------------------------------------------

export async function profile(ctx) {
  const me = (await ctx.call("GET", "/api/me")).user;
  const current = h("input", { type: "password", autocomplete: "current-password", required: true });
  const next = h("input", { type: "password", autocomplete: "new-password", minlength: 10, required: true });
  const password = form("Change password", [row("current-password", "Current password", current),
    row("new-password", "New password", next)], "Change password", async () => {
    await ctx.call("PUT", "/api/me/password", {
      body: { currentPassword: current.value, newPassword: next.value },
    });
    current.value = next.value = "";
    return note("Password changed; your other sessions were signed out.");
  }, { currentPassword: current, newPassword: next });
  const sessions = (await ctx.call("GET", "/api/session/list")).data;
  const list = h("ul", { class: "sessions" }, sessions.map((s) => h("li", {},
    `${s.userAgent || "unknown browser"} — ${s.ip} — since ${time(s.createdAt)}`,
    s.current ? " (this one)" : h("button", {
      type: "button",
      onclick: async () => {
        await ctx.call("DELETE", `/api/session/${s.id}`);
        ctx.refresh();
      },
    }, "End"))));
  const others = sessions.filter((s) => !s.current);
  const signOutOthers = h("button", {
    type: "button",
    disabled: others.length === 0,
    onclick: async () => {
      for (const s of others) await ctx.call("DELETE", `/api/session/${s.id}`);
      ctx.refresh();
    },
  }, "Sign out other sessions");
  return h("section", { "aria-label": "Profile" },
    h("p", {}, `${me.name} — ${me.email} — ${me.role}`),
    h("h3", {}, "Password"), password,
    h("h3", {}, "Two-factor"), twoFactor(ctx, me),
    h("h3", {}, "Sessions"), list, signOutOthers);
}

function twoFactor(ctx, me) {
  const box = h("div", { class: "two-factor" });
  if (me.twoFactorEnabled) {
    const password = h("input", { type: "password", autocomplete: "current-password", required: true });
    box.append(note("Two-factor is on."), form("Turn two-factor off",
      [row("2fa-password", "Password", password)], "Turn off", async () => {
        await ctx.call("DELETE", "/api/me/2fa", { body: { password: password.value } });
        ctx.refresh();
      }, { password }));
    return box;
  }
  box.append(h("button", {
    type: "button",
    onclick: async () => {
      const started = await ctx.call("POST", "/api/me/2fa", { body: {} });
      const svg = await (await fetch(`${root}/console/qr`, { method: "POST", body: started.otpauthUrl })).text();
      const image = h("img", { alt: "QR code for your authenticator app", class: "qr",
        src: `data:image/svg+xml;base64,${btoa(svg)}` });
      const code = h("input", { inputmode: "numeric", autocomplete: "one-time-code", required: true });
      box.replaceChildren(image, h("p", {}, `Or enter this key: ${started.secret}`),
        form("Turn two-factor on", [row("2fa-code", "Code", code)], "Turn on", async () => {
          const done = await ctx.call("POST", "/api/me/2fa/enable", { body: { code: code.value.trim() } });
          box.replaceChildren(note("Two-factor is on. Keep these recovery codes (shown once):"),
            h("ul", { class: "recovery" }, done.recoveryCodes.map((c) => h("li", {}, c))));
        }, { code }));
    },
  }, "Set up two-factor"));
  return box;
}
