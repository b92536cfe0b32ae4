// The pipeline view (contract H): per opportunity stage the count and total amount, and won
// vs lost totals by month, drawn as SVG from GET /api/opportunity/pipeline. Each chart is a
// <figure> named by its caption; the SVG carries its own text, so it reads without colour.
// It follows the events feed (live.js) as the boards do: an opportunity changed elsewhere
// redraws it.
import { money } from "./cards.js";
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const LIVE_DELAY = 100; // ms to gather the events of one burst into one redraw
const LABEL_WIDTH = 180; // px left of the bars for a stage's name
const LABEL_CHARS = 24; // a first cut of a long name, before it is measured
const BAR_WIDTH = 420; // px of the longest bar
// Right of a bar, its value ("3 · 1,200.50"), never cut: amounts show every digit the API
// wrote. The chart is this much wider than its longest bar, or wider still when a value
// needs it (first guessed from its characters, then measured in the page).
const VALUE_ROOM = 160;
const VALUE_CHAR = 7.5; // px: a generous guess of a value's character at 12 px
const VALUE_GAP = 6; // px between a bar and its value, and after the value

// The pipeline on screen, so that its successor can unsubscribe it from the events feed.
let active = null;

function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) element.append(child instanceof Node ? child : String(child));
  return element;
}

function chart(title, width, height, ...content) {
  const id = `chart-${title.toLowerCase().replace(/\W+/g, "-")}`;
  return h(
    "figure",
    { class: "chart", "aria-labelledby": id },
    h("figcaption", { id }, title),
    s(
      "svg",
      // Its natural size (width), shrunk to fit a narrow screen (CSS max-width).
      { viewBox: `0 0 ${width} ${height}`, width, role: "img", "aria-label": title, class: "chart-svg" },
      s("title", {}, title),
      ...content,
    ),
  );
}

// One horizontal bar per stage: its length is the stage's total amount (its count when no
// stage has an amount), labelled with the stage's name, count and total.
// A name cut to what fits, with an ellipsis; the full name stays in its <title>.
function shortened(name, chars) {
  return name.length > chars ? `${name.slice(0, Math.max(1, chars - 1)).trimEnd()}…` : name;
}

// A stage's name as its row's label: right-aligned before the bar, never past the chart's
// left edge (cut with an ellipsis: `fitText` measures it once drawn), its full name in
// a <title> (a tooltip; what a screen reader reads).
function stageLabel(name, x, y) {
  const text = s("text", { x, y, "text-anchor": "end", class: "label", "data-name": name }, s("title", {}, name));
  text.append(shortened(name, LABEL_CHARS));
  return text;
}

// Cut the labels that still overflow the room left of the bars, as the browser measures
// them (the first cut counts characters, whose widths differ); and size the chart to its
// values as measured, never narrower than with VALUE_ROOM.
function fitText(figure) {
  for (const label of figure.querySelectorAll("text[data-name]")) {
    const name = label.dataset.name;
    const words = label.lastChild;
    let chars = Math.min(name.length, LABEL_CHARS);
    while (chars > 1 && label.getComputedTextLength() > LABEL_WIDTH - 12) {
      chars -= 1;
      words.textContent = shortened(name, chars);
    }
  }
  for (const svg of figure.querySelectorAll("svg")) {
    const values = [...svg.querySelectorAll("text.value")];
    if (!values.length) continue;
    const ends = values.map((value) => Number(value.getAttribute("x")) + value.getComputedTextLength());
    const width = Math.ceil(Math.max(LABEL_WIDTH + BAR_WIDTH + VALUE_ROOM, ...ends.map((end) => end + VALUE_GAP)));
    const height = svg.viewBox.baseVal.height;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
  }
}

function stagesChart(stages) {
  const rowHeight = 34;
  const labelWidth = LABEL_WIDTH;
  const barWidth = BAR_WIDTH;
  let width = labelWidth + barWidth + VALUE_ROOM;
  const height = Math.max(1, stages.length) * rowHeight + 10;
  const largest = Math.max(0, ...stages.map((stage) => Number(stage.totalAmount)));
  const byCount = largest === 0;
  const most = byCount ? Math.max(1, ...stages.map((stage) => stage.count)) : largest;
  const rows = stages.map((stage, index) => {
    const y = 5 + index * rowHeight;
    const value = byCount ? stage.count : Number(stage.totalAmount);
    const length = Math.max(2, (value / most) * barWidth);
    const label = `${stage.count} · ${money(stage.totalAmount)}`;
    const x = labelWidth + length + VALUE_GAP;
    width = Math.max(width, Math.ceil(x + label.length * VALUE_CHAR + VALUE_GAP));
    return s(
      "g",
      { class: "stage-row" },
      s("title", {}, `${stage.name}: ${stage.count} ${stage.count === 1 ? "opportunity" : "opportunities"}, total ${money(stage.totalAmount)}`),
      stageLabel(stage.name, labelWidth - 8, y + 19),
      s("rect", { x: labelWidth, y: y + 4, width: length, height: rowHeight - 12, rx: 3, class: "bar-stage" }),
      s("text", { x, y: y + 19, class: "value" }, label),
    );
  });
  return chart("Opportunities by stage", width, height, ...rows);
}

// Per month two bars side by side, won and lost (their finalAmount totals).
function monthsChart(months) {
  const height = 260;
  const base = 220;
  const group = 64;
  const bar = 24;
  const left = 50;
  const width = Math.max(560, left + months.length * group + 20);
  const most = Math.max(1, ...months.flatMap((m) => [Number(m.won.totalAmount), Number(m.lost.totalAmount)]));
  const scale = (value) => (Number(value) / most) * (base - 30);
  const content = [
    s("line", { x1: left - 4, x2: width - 10, y1: base, y2: base, class: "axis" }),
    s("rect", { x: left, y: 4, width: 12, height: 12, class: "bar-won key" }),
    s("text", { x: left + 16, y: 14, class: "legend" }, "Won"),
    s("rect", { x: left + 60, y: 4, width: 12, height: 12, class: "bar-lost key" }),
    s("text", { x: left + 76, y: 14, class: "legend" }, "Lost"),
  ];
  months.forEach((month, index) => {
    const x = left + index * group + 6;
    for (const [offset, outcome, name] of [[0, month.won, "won"], [bar + 2, month.lost, "lost"]]) {
      const tall = Math.max(1, scale(outcome.totalAmount));
      content.push(
        s(
          "rect",
          { x: x + offset, y: base - tall, width: bar, height: tall, class: `bar-${name}` },
          s("title", {}, `${month.month} ${name}: ${outcome.count}, total ${money(outcome.totalAmount)}`),
        ),
      );
    }
    content.push(s("text", { x: x + bar, y: base + 16, "text-anchor": "middle", class: "label" }, month.month));
  });
  if (!months.length) {
    content.push(s("text", { x: left, y: base / 2, class: "label" }, "No opportunity won or lost yet."));
  }
  return chart("Won and lost by month", width, height, ...content);
}

// The same figures as a table, for reading them exactly. At phone width its long amounts
// may not fit: it scrolls inside its own box, not the page.
function monthsTable(months) {
  return h("div", { class: "months-box" }, monthsRows(months));
}

function monthsRows(months) {
  return h(
    "table",
    { class: "months", "aria-label": "Won and lost totals by month" },
    h("thead", {}, h("tr", {}, ["Month", "Won", "Won total", "Lost", "Lost total"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      months.map((m) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, m.month),
          h("td", {}, String(m.won.count)),
          h("td", {}, money(m.won.totalAmount)),
          h("td", {}, String(m.lost.count)),
          h("td", {}, money(m.lost.totalAmount)),
        ),
      ),
    ),
  );
}

function charts(data) {
  return [stagesChart(data.stages), monthsChart(data.months), monthsTable(data.months)];
}

// Its labels are measured once it is on the page (the view is shown after it resolves).
function whenShown(element, then) {
  const check = (tries) => {
    if (element.isConnected) then();
    else if (tries > 0) requestAnimationFrame(() => check(tries - 1));
  };
  requestAnimationFrame(() => check(60));
}

export async function pipeline(ctx) {
  const data = await ctx.call("GET", "/api/opportunity/pipeline");
  const region = h("div", { class: "pipeline", role: "region", "aria-label": "Pipeline" }, ...charts(data));
  whenShown(region, () => fitText(region));
  // Live (contract H): an opportunity created, changed or deleted elsewhere redraws it,
  // 100 ms after the last event of a burst.
  let pending = null;
  let loads = 0;
  // A sweep (live.js, an agent's) redraws it only when the figures are not the ones shown.
  let shown = JSON.stringify(data);
  const listener = (events, swept) => {
    if (!region.isConnected) return;
    const news = events.some((e) => e.type.startsWith("opportunity.") && !e.type.startsWith("opportunity.activity."));
    if (!news && !swept) return;
    clearTimeout(pending);
    pending = setTimeout(async () => {
      const turn = ++loads;
      try {
        const next = await ctx.call("GET", "/api/opportunity/pipeline");
        if (turn !== loads || !region.isConnected) return;
        const figures = JSON.stringify(next);
        if (swept && figures === shown) return;
        shown = figures;
        region.replaceChildren(...charts(next));
        fitText(region);
      } catch {
        // the next change tries again; a reload shows the error
      }
    }, swept ? 0 : LIVE_DELAY);
  };
  if (active) ctx.listeners.delete(active);
  active = listener;
  ctx.listeners.add(listener);
  return region;
}
