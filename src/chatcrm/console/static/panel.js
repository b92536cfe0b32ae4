// Detail panels (contract H): a modal <dialog> over the board, named by the record, with
// every field, an edit form saved with If-Match, activities and history. What both kinds
// share is here; contact-panel.js and opportunity-panel.js hold what is their own.
import { contactPanel } from "./contact-panel.js";
import { h } from "./dom.js";
import { Feedback, uid } from "./forms.js";
import { opportunityPanel } from "./opportunity-panel.js";

// The panel of a contact or an opportunity; the <dialog> is returned at once (open, loading)
// and removed from the page when it closes ("Close" or Escape).
export function openPanel(ctx, kind, id) {
  const frame = panelFrame(kind === "contact" ? "Contact" : "Opportunity");
  const opener = document.activeElement;
  document.body.append(frame.dialog);
  frame.dialog.showModal();
  frame.dialog.addEventListener("close", () => focusAgain(opener));
  const fill = kind === "contact" ? contactPanel : opportunityPanel;
  fill(ctx, id, frame).catch((error) => {
    frame.title(kind === "contact" ? "Contact" : "Opportunity");
    frame.fill();
    frame.feedback.error(error);
  });
  return frame.dialog;
}

// The browser gives the focus back to what had it when the panel opened; when the board was
// drawn again meanwhile (the panel's own changes, an event), that card is gone: its
// successor, the card of the same record, gets it, so a keyboard user goes on from there.
function focusAgain(opener) {
  if (!opener || opener.isConnected || !opener.dataset?.id) return;
  const same = [...document.querySelectorAll(".card[data-id]")].find((card) => card.dataset.id === opener.dataset.id);
  if (same) same.focus();
}

function panelFrame(what) {
  const titleId = uid("panel-title");
  const title = h("h2", { id: titleId }, `${what}…`);
  const feedback = new Feedback();
  const body = h("div", { class: "panel-body" }, h("p", {}, "Loading…"));
  const close = h("button", { type: "button", class: "close" }, "Close");
  const dialog = h(
    "dialog",
    { class: "sheet panel", "aria-labelledby": titleId },
    h("header", { class: "panel-head" }, title, close),
    feedback.slot,
    feedback.statusLine,
    body,
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  return {
    dialog,
    feedback,
    title: (text) => {
      title.textContent = text || `(${what.toLowerCase()} without a name)`;
    },
    fill: (...children) => body.replaceChildren(...children),
  };
}
