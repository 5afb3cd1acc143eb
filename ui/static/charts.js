// Charts drawn in SVG by hand: bars over time, and horizontal bars per
// tool. They scale with their container (viewBox) and carry <title>s and
// an aria-label; the statistics page gives the same figures as a table.

import { s, h } from "./dom.js";

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// timeBars draws stacked bars (ok below, errors above) per time bucket.
// buckets: [{start: Date, end: Date, ok, err}].
// width is the width it gets on the page, so that its text keeps its size.
export function timeBars(buckets, { label, fmtTick, width = 760 }) {
  const W = Math.max(280, Math.round(width)), H = 220, L = 40, R = 8, T = 10, B = 28;
  const max = niceMax(Math.max(1, ...buckets.map((b) => b.ok + b.err)));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label, preserveAspectRatio: "xMidYMid meet" });
  const pw = W - L - R, ph = H - T - B;
  const y = (v) => T + ph - (v / max) * ph;
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    svg.append(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? "grid" : "axis" }),
      s("text", { x: L - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, fmtCount(v)));
  }
  const n = buckets.length || 1;
  const bw = pw / n;
  const gap = Math.min(2, bw * 0.2);
  const every = Math.ceil(n / Math.max(2, Math.floor(pw / 90)));
  buckets.forEach((b, i) => {
    const x = L + i * bw + gap / 2;
    const w = Math.max(bw - gap, 1);
    const g = s("g", { class: "bar-group" });
    g.append(s("title", null, `${fmtTick(b.start, true)}: ${b.ok} ok, ${b.err} failed`));
    if (b.ok) g.append(s("rect", { x, y: y(b.ok), width: w, height: Math.max(y(0) - y(b.ok), 0.5), class: "bar-ok" }));
    if (b.err) g.append(s("rect", { x, y: y(b.ok + b.err), width: w, height: Math.max(y(b.ok) - y(b.ok + b.err), 0.5), class: "bar-err" }));
    // A transparent hit area, so a bucket's title shows wherever it is hovered.
    g.append(s("rect", { x: L + i * bw, y: T, width: bw, height: ph, class: "hit" }));
    svg.append(g);
    if (i % every === 0) {
      svg.append(s("text", { x: L + i * bw + bw / 2, y: H - 8, class: "tick", "text-anchor": "middle" }, fmtTick(b.start, false)));
    }
  });
  return svg;
}

// hBars draws one row per item with one bar per series, on a shared scale:
// linear from 0 (or to a fixed max), or with log true a logarithmic one
// when the values span more than two orders of magnitude, so that a tool
// of 0.1 ms and one of 600 ms both show. rows: [{name, values: [..]}];
// series: [{key, label, cls}]. width is the width it gets on the page.
export function hBars(rows, series, { label, fmt, max: fixedMax, log, width = 520 }) {
  const barH = 9, rowH = (barH + 2) * series.length + 14;
  const L = 120, R = 70, T = 4;
  const W = Math.max(280, Math.round(width)), H = T + rows.length * rowH + (log ? 18 : 4);
  const all = rows.flatMap((r) => r.values).filter((v) => v > 0);
  const hi = fixedMax || niceMax(Math.max(0, ...all));
  const lo = all.length ? 10 ** Math.floor(Math.log10(Math.min(...all))) : 1;
  const useLog = log && all.length && hi / lo > 100;
  const pw = W - L - R;
  const scale = useLog
    ? (v) => (v <= lo ? 0 : (Math.log10(v / lo) / Math.log10(hi / lo)) * pw)
    : (v) => (v / hi) * pw;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label + (useLog ? " (logarithmic scale)" : "") });
  rows.forEach((r, i) => {
    const y0 = T + i * rowH;
    const g = s("g", { class: "row" });
    g.append(s("title", null, `${r.name}: ${series.map((se, j) => `${se.label} ${fmt(r.values[j])}`).join(", ")}`));
    g.append(s("text", { x: L - 8, y: y0 + rowH / 2 + 2, class: "label", "text-anchor": "end" }, clip(r.name, 16)));
    series.forEach((se, j) => {
      const v = r.values[j] || 0;
      const w = Math.max(scale(v), v > 0 ? 2 : 0);
      const y = y0 + 6 + j * (barH + 2);
      g.append(s("rect", { x: L, y, width: pw, height: barH, class: "track", rx: 2 }));
      g.append(s("rect", { x: L, y, width: w, height: barH, class: se.cls, rx: 2 }));
      g.append(s("text", { x: L + pw + 6, y: y + barH - 1, class: "tick" }, fmt(v)));
    });
    svg.append(g);
  });
  if (useLog) {
    svg.append(s("text", { x: L, y: H - 4, class: "tick" }, `log scale: ${fmt(lo)} to ${fmt(hi)}`));
  }
  return svg;
}

// legend is a row of colour swatches.
export function legend(series) {
  return h("ul", { class: "legend" }, series.map((se) => h("li", null, h("i", { class: `sw ${se.cls}`, "aria-hidden": "true" }), se.label)));
}

function clip(t, n) {
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function fmtCount(v) {
  if (v >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(1));
}
