/**
 * Live charts of the last blocks, drawn as inline SVG (no library: two small charts do not need
 * one, and the CSP allows no external code). Each chart is a <figure> with a caption, an SVG
 * with a <title> per mark (hover and screen readers), and the latest figures as plain text.
 * Colours come from style.css classes: the CSP forbids inline style attributes.
 */
import { amount, h } from "./dom.js";

const SVG_NS = "http://www.w3.org/2000/svg";
/** The drawing's own units; the SVG scales to its box (viewBox). */
const WIDTH = 600;
const HEIGHT = 150;
const PLOT = { left: 48, right: WIDTH - 8, top: 10, bottom: HEIGHT - 24 };

/** Like `h`, for SVG elements (they need their namespace). */
function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** The smallest 1, 2 or 5 × 10^k at or above `value` (at least `floor`): a readable axis top. */
export function niceCeil(value, floor = 1) {
  const target = Math.max(value, floor);
  const power = 10 ** Math.floor(Math.log10(target));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= target) return step * power;
  }
  return 10 * power;
}

const round = (n) => Math.round(n * 10) / 10;

/**
 * The frame of one chart: horizontal grid lines at 0, half and the top of the scale, labelled by
 * `label` (the half line only when its value is whole), and under the x axis the numbers of the
 * first and last blocks drawn, each under its own mark.
 */
function frame(top, label, series, slots) {
  const y = (fraction) => round(PLOT.bottom - fraction * (PLOT.bottom - PLOT.top));
  const grid = [0, 0.5, 1].flatMap((fraction) => {
    const value = top * fraction;
    const line = svg("line", {
      class: "grid",
      x1: PLOT.left,
      x2: PLOT.right,
      y1: y(fraction),
      y2: y(fraction),
    });
    if (!Number.isInteger(value)) return [line];
    const text = svg(
      "text",
      { class: "tick", x: PLOT.left - 6, y: y(fraction) + 4, "text-anchor": "end" },
      label(value),
    );
    return [line, text];
  });
  const first = series[0];
  const last = series.at(-1);
  const axis = [];
  if (last !== undefined) {
    axis.push(
      svg("text", { class: "tick", x: PLOT.right, y: HEIGHT - 6, "text-anchor": "end" }, `#${last.number}`),
    );
  }
  const firstX = slotX(0, series.length, slots).x;
  // Only when it does not run into the last one's label.
  if (first !== undefined && first !== last && PLOT.right - firstX > 60) {
    axis.push(svg("text", { class: "tick", x: round(firstX), y: HEIGHT - 6 }, `#${first.number}`));
  }
  return [...grid, ...axis];
}

/**
 * `series`: [{number, value}] oldest first, at most `slots` of them; they fill the rightmost
 * slots, so the newest block is always at the right edge and older ones move left as blocks come.
 */
function slotX(index, count, slots) {
  const width = (PLOT.right - PLOT.left) / slots;
  return { x: PLOT.left + (slots - count + index) * width, width };
}

function barChart(series, slots, describe) {
  const top = niceCeil(Math.max(0, ...series.map((point) => point.value)));
  const bars = series.map((point, index) => {
    const { x, width } = slotX(index, series.length, slots);
    const height = ((PLOT.bottom - PLOT.top) * point.value) / top;
    return svg(
      "rect",
      {
        class: "bar",
        x: round(x + width * 0.15),
        y: round(PLOT.bottom - height),
        width: round(width * 0.7),
        height: round(height),
        "data-number": point.number,
        "data-value": point.value,
      },
      svg("title", {}, describe(point)),
    );
  });
  return [...frame(top, amount, series, slots), ...bars];
}

/** Milliseconds as an axis label: seconds from one second up. */
const msLabel = (ms) => (ms === 0 ? "0" : ms >= 1000 ? `${amount(ms / 1000)} s` : `${amount(ms)} ms`);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)];
};

/**
 * A line of points. The scale tops at 4× the median when a few values are far above it (one
 * long pause, e.g. before a dev chain's first transaction, would flatten every other point):
 * those points sit on the top line, marked "clipped", their <title> giving the true value.
 */
function lineChart(series, slots, describe) {
  const values = series.map((point) => point.value);
  const top = niceCeil(Math.min(Math.max(0, ...values), 4 * median(values)), 10);
  const coordinates = series.map((point, index) => {
    const { x, width } = slotX(index, series.length, slots);
    const shown = Math.min(point.value, top);
    return [round(x + width / 2), round(PLOT.bottom - ((PLOT.bottom - PLOT.top) * shown) / top)];
  });
  const points = series.map((point, index) => {
    const [cx, cy] = coordinates[index];
    return svg(
      "circle",
      {
        class: point.value > top ? "point clipped" : "point",
        cx,
        cy,
        r: point.value > top ? 3.5 : 2.5,
        "data-number": point.number,
        "data-value": point.value,
      },
      svg("title", {}, describe(point)),
    );
  });
  const line = svg("polyline", {
    class: "line",
    points: coordinates.map(([x, y]) => `${x},${y}`).join(" "),
  });
  return [...frame(top, msLabel, series, slots), line, ...points];
}

/** One chart: caption, SVG (labelled by the caption) and a text line of the latest figures. */
function figure(id, caption) {
  const captionId = `${id}-caption`;
  const title = svg("title", {}, caption);
  const drawing = svg("svg", {
    id: `${id}-svg`,
    class: "chart",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-labelledby": captionId,
  });
  const latest = h("p", { class: "chart-latest", id: `${id}-latest` });
  const element = h(
    "figure",
    { id, class: "chart-figure" },
    h("figcaption", { id: captionId }, caption),
    drawing,
    latest,
  );
  return {
    element,
    draw(marks, text) {
      drawing.replaceChildren(title, ...marks);
      drawing.setAttribute(
        "data-count",
        String(marks.filter((mark) => mark.hasAttribute("data-number")).length),
      );
      latest.textContent = text;
    },
  };
}

const mean = (values) => (values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length);
const plural = (n, word) => `${amount(n)} ${word}${n === 1 ? "" : "s"}`;

/**
 * The two block charts of the home page. `update(blocks)` takes the blocks the page holds, in
 * ascending consecutive order: the last `slots` are drawn, and the one before them (when held)
 * gives the first of them its interval.
 */
export function blockCharts(slots) {
  const txs = figure("chart-txs", `Transactions per block, last ${slots} blocks`);
  const interval = figure(
    "chart-interval",
    `Block interval: milliseconds between consecutive block timestamps, last ${slots} blocks`,
  );
  const element = h(
    "section",
    { class: "charts", "aria-label": "Block charts" },
    txs.element,
    interval.element,
  );

  function update(blocks) {
    const shown = blocks.slice(-slots);
    const counts = shown.map((block) => ({ number: block.number, value: block.transactions.length }));
    const gaps = [];
    blocks.forEach((block, index) => {
      const previous = blocks[index - 1];
      if (previous !== undefined && previous.number === block.number - 1) {
        gaps.push({ number: block.number, value: block.timestamp - previous.timestamp });
      }
    });
    const intervals = gaps.slice(-slots);

    const newest = counts.at(-1);
    txs.draw(
      barChart(counts, slots, (p) => `Block #${p.number}: ${plural(p.value, "transaction")}`),
      newest === undefined
        ? "No blocks yet."
        : `Latest: block #${newest.number} with ${plural(newest.value, "transaction")}. ` +
            `Mean ${mean(counts.map((p) => p.value)).toFixed(2)}, ` +
            `max ${amount(Math.max(...counts.map((p) => p.value)))} over ${plural(counts.length, "block")}.`,
    );
    const last = intervals.at(-1);
    const values = intervals.map((p) => p.value);
    interval.draw(
      lineChart(intervals, slots, (p) => `Block #${p.number}: ${amount(p.value)} ms after #${p.number - 1}`),
      last === undefined
        ? "No interval yet: it needs two blocks."
        : `Latest: block #${last.number} came ${amount(last.value)} ms after #${last.number - 1}. ` +
            `Mean ${amount(Math.round(mean(values)))} ms, min ${amount(Math.min(...values))} ms, ` +
            `max ${amount(Math.max(...values))} ms over ${plural(values.length, "interval")}.`,
    );
  }

  return { element, update };
}
