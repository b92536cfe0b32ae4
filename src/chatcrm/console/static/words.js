// What the console says to people rather than to clients: field labels in place of wire
// names, a record's history as sentences, phones as people read them, and the API's
// refusals that people meet most often said in their words (the API's own messages stay as
// they are; only the console's wording changes).

const COMMON = {
  id: "Id",
  creationDate: "Created",
  assignedAgentId: "Agent",
  assignedAgentName: "Agent name",
  segmentationId: "Segmentation",
  orderInCards: "Position",
  orderInCardsLastUpdated: "Position changed",
  files: "Files",
  workspaceId: "Workspace",
  name: "Name",
  stageId: "Stage",
};

const LABELS = {
  contact: {
    ...COMMON,
    lastMessage: "Last message",
    lastMessageDate: "Last message at",
    platformSenderId: "Sender id",
    platformSenderName: "Sender name",
    platformSenderPhone: "Sender phone",
    isRead: "Read",
    isBotEnabled: "Bot enabled",
    isManuallyAdded: "Added by hand",
    avatarColor: "Avatar colour",
    tags: "Tags",
    variables: "Custom fields",
    customFields: "Custom fields",
    isSolved: "Solved",
    solvedByAgentId: "Solved by",
    solvedDate: "Solved at",
    internalWhatsappNumber: "Phone",
    phone: "Phone",
    lastname: "Last name",
    email: "Email",
    platformId: "Channel",
  },
  opportunity: {
    ...COMMON,
    opportCode: "Code",
    opportStatus: "Status",
    winLossStatus: "Outcome",
    winLossDate: "Outcome date",
    finalAmount: "Final amount",
    creationTypeId: "Created by way of",
    updatedDate: "Updated",
    deletionDate: "Deleted",
    userDeletion: "Deleted by",
    statusId: "Record status",
    activities: "Activities",
    description: "Description",
    amount: "Amount",
    userCreation: "Created by",
    contactId: "Contact",
    expirationDate: "Expires",
  },
};

// A field's label; its wire name when the console has none.
export function labelOf(kind, key) {
  return (LABELS[kind] || {})[key] || LABELS.contact[key] || LABELS.opportunity[key] || key;
}

// ITU country codes of one and two digits; every other one has three.
const ONE_DIGIT = new Set(["1", "7"]);
const TWO_DIGITS = new Set(
  "20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98".split(
    " ",
  ),
);

function groups(digits) {
  const n = digits.length;
  let sizes;
  if (n <= 4) sizes = [n];
  else if (n === 5) sizes = [2, 3];
  else if (n % 3 === 0) sizes = Array(n / 3).fill(3);
  else if (n % 3 === 1) sizes = [...Array((n - 4) / 3).fill(3), 4];
  else sizes = [...Array((n - 8) / 3).fill(3), 4, 4];
  const out = [];
  let at = 0;
  for (const size of sizes) {
    out.push(digits.slice(at, at + size));
    at += size;
  }
  return out;
}

// A stored phone (digits with the country code, `51987654321`) as people read it:
// `+51 987 654 321`. Anything that is not such digits is shown as it is.
export function formatPhone(value) {
  const text = String(value ?? "").trim();
  const digits = text.replace(/^\+/, "");
  if (!/^\d{6,15}$/.test(digits)) return text;
  const size = ONE_DIGIT.has(digits[0]) ? 1 : TWO_DIGITS.has(digits.slice(0, 2)) ? 2 : 3;
  return `+${digits.slice(0, size)} ${groups(digits.slice(size)).join(" ")}`;
}

// Fields an update sets as a consequence of another (docs/api.md 2.23): not named again.
const CONSEQUENCES = new Set([
  "orderInCardsLastUpdated",
  "assignedAgentName",
  "solvedByAgentId",
  "solvedDate",
  "lastMessageDate",
  "updatedDate",
  "opportStatus",
  "winLossDate",
]);
const OUTCOME_WORDS = { 0: "Reopened", 1: "Marked as won", 2: "Marked as lost" };

function stageWord(ctx, kind, id) {
  const stages = kind === "contact" ? ctx.workspace.contactStages : ctx.workspace.opportunityStages;
  const stage = stages.find((s) => s.id === id);
  return stage ? stage.name : "another stage";
}

// One history event (D.3) as a sentence: "Created", "Stage changed to Proposal",
// "Updated: Name, Email"…
export function historyLine(ctx, kind, event) {
  const type = event.type.split(".").slice(1).join(".");
  const simple = {
    created: "Created",
    deleted: "Deleted",
    restored: "Restored",
    merged: "Merged with a duplicate",
    "activity.created": "Activity added",
  };
  if (type !== "updated") return simple[type] || event.type;
  const data = event.data || {};
  const parts = [];
  let rest = event.changed.filter((name) => !CONSEQUENCES.has(name));
  if (rest.includes("stageId")) {
    parts.push(`Stage changed to ${stageWord(ctx, kind, data.stageId)}`);
    rest = rest.filter((name) => name !== "stageId" && name !== "orderInCards");
  }
  if (kind === "opportunity" && rest.includes("winLossStatus")) {
    parts.push(OUTCOME_WORDS[data.winLossStatus] || "Outcome changed");
    rest = rest.filter((name) => name !== "winLossStatus");
  }
  if (kind === "opportunity" && rest.includes("amount")) rest = rest.filter((name) => name !== "finalAmount");
  if (rest.length) parts.push(`Updated: ${rest.map((name) => labelOf(kind, name)).join(", ")}`);
  return parts.join("; ") || "Updated";
}

// Who made a change (J.4: each event's `actor`), as a person reads it; null when the event
// names no one (events written before people had names).
export function actorWords(actor) {
  if (!actor || !actor.type) return null;
  if (actor.type === "user") return actor.name || "a user";
  if (actor.type === "key") return actor.name ? `the key “${actor.name}”` : "an API key";
  if (actor.type === "channel") return actor.name ? `WhatsApp ${actor.name}` : "WhatsApp";
  return actor.name || "chatcrm";
}

const PHONE_FIELDS = new Set(["phone", "internalWhatsappNumber"]);

// The API's refusal in a person's words, for Feedback (forms.js): `error.display` is what
// the alert shows (text or nodes); next to a field the API's own message stays, a friendlier
// line after it (docs/api.md: the console's wording). `open(id)` opens the contact a
// duplicate names. Returns the error.
export async function explain(ctx, kind, error, open) {
  if (!error || typeof error !== "object") return error;
  const what = kind === "opportunity" ? "opportunity" : "contact";
  if (error.status === 412) {
    // The API's own message after ours: it names the versions.
    error.display = `Someone else changed this ${what} — reload to see their change. (${error.message})`;
    return error;
  }
  const whatsapp = (error.errors || []).find(
    (e) => PHONE_FIELDS.has(e.field) && /required for WhatsApp contacts/.test(e.message || ""),
  );
  if (whatsapp) {
    whatsapp.message = `${whatsapp.message} — WhatsApp contacts need one`;
    error.display = "WhatsApp contacts need a phone number";
    return error;
  }
  if (error.code === "DUPLICATE_CONTACT") {
    const field = (error.errors || []).find((e) => e.field);
    const thing = field && PHONE_FIELDS.has(field.field) ? "phone" : "email";
    const existing = error.data && error.data.existingId;
    if (!existing) {
      error.display = `Another contact already has this ${thing}`;
      return error;
    }
    let name = "another contact";
    try {
      const found = await ctx.call("GET", `/api/contact/${encodeURIComponent(existing)}`);
      const contact = found.data[0];
      name = [contact.name, contact.lastname].filter(Boolean).join(" ") || name;
    } catch {
      // not readable: the link still leads to it
    }
    if (field) field.message = `${field.message} — ${name} has it`;
    const link = document.createElement("a");
    link.href = `#contacts/${encodeURIComponent(existing)}`;
    link.textContent = name;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      link.closest("dialog")?.close();
      open(existing);
    });
    error.display = [`A contact already has this ${thing}: `, link];
  }
  return error;
}
