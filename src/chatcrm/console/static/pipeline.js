// The pipeline view (contract H): per opportunity stage the count and total amount, and won
// vs lost totals by month, drawn as SVG from GET /api/opportunity/pipeline. Each chart is a
// <figure> named by its caption; the SVG carries its own text, so it reads without colour.
import { money } from "./cards.js";
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

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
function stagesChart(stages) {
  const rowHeight = 34;
  const labelWidth = 180;
  const barWidth = 420;
  const height = Math.max(1, stages.length) * rowHeight + 10;
  const largest = Math.max(0, ...stages.map((stage) => Number(stage.totalAmount)));
  const byCount = largest === 0;
  const most = byCount ? Math.max(1, ...stages.map((stage) => stage.count)) : largest;
  const rows = stages.map((stage, index) => {
    const y = 5 + index * rowHeight;
    const value = byCount ? stage.count : Number(stage.totalAmount);
    const length = Math.max(2, (value / most) * barWidth);
    const label = `${stage.count} · ${money(stage.totalAmount)}`;
    return s(
      "g",
      { class: "stage-row" },
      s("title", {}, `${stage.name}: ${stage.count} opportunities, total ${money(stage.totalAmount)}`),
      s("text", { x: labelWidth - 8, y: y + 19, "text-anchor": "end", class: "label" }, stage.name),
      s("rect", { x: labelWidth, y: y + 4, width: length, height: rowHeight - 12, rx: 3, class: "bar-stage" }),
      s("text", { x: labelWidth + length + 6, y: y + 19, class: "value" }, label),
    );
  });
  return chart("Opportunities by stage", labelWidth + barWidth + 160, height, ...rows);
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

// The same figures as a table, for reading them exactly.
function monthsTable(months) {
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

export async function pipeline(ctx) {
  const data = await ctx.call("GET", "/api/opportunity/pipeline");
  return h(
    "div",
    { class: "pipeline", role: "region", "aria-label": "Pipeline" },
    stagesChart(data.stages),
    monthsChart(data.months),
    monthsTable(data.months),
  );
}
