// Limiter: the concurrency controller live — calls in flight and queued,
// overall and per bucket, read from GET /v1/limiter every second while
// the page is open (and at once when a call starts or ends), with the
// last two minutes drawn as lines.

import { api } from "./api.js";
import { h, s, clear, empty, errorBox, fmtMS } from "./dom.js";
import { onEvent } from "./events.js";
import { niceMax } from "./charts.js";

const EVERY = 1000; // ms between reads
const KEEP = 120; // samples kept per series: two minutes

// page renders #/limiter.
export function page(main) {
  const cards = h("div", { class: "stat-cards" });
  const chart = h("div", { class: "card lim-chart" });
  const bucketsEl = h("div", { class: "table-wrap" });
  const stateEl = h("p", { class: "muted small", role: "status" }, "Reading the limiter…");
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Limiter"),
      h("p", { class: "muted" }, "Calls in flight and waiting for capacity, overall and per bucket (the tools' categories), read every second."), stateEl),
    cards, chart,
    h("section", { class: "card", "aria-labelledby": "bk-h" }, h("h2", { id: "bk-h" }, "Buckets"), bucketsEl));

  const hist = { t: [], cur: [], queue: [] };
  let last = null; // the previous sample, for rates
  let busy = false;
  let closed = false;

  async function read() {
    if (busy || closed || document.hidden) return;
    busy = true;
    try {
      const m = await api("/v1/limiter");
      if (closed) return;
      const now = Date.now();
      const rate = last ? ((m.total_acquired - last.m.total_acquired) * 1000) / Math.max(now - last.t, 1) : NaN;
      last = { m, t: now };
      push(hist.t, now);
      push(hist.cur, m.current_concurrent);
      push(hist.queue, m.queue_length);
      draw(m, rate);
      stateEl.textContent = `Read ${new Date(now).toLocaleTimeString()}; every second while this page is open.`;
    } catch (e) {
      clear(bucketsEl, errorBox(e, read));
      stateEl.textContent = "The limiter could not be read; trying again.";
    } finally {
      busy = false;
    }
  }

  function draw(m, rate) {
    const limit = m.limit > 0 ? String(m.limit) : "no limit";
    clear(cards,
      stat("In flight", `${m.current_concurrent}`, `of ${limit}`, m.limit > 0 && m.current_concurrent >= m.limit, "lim-current"),
      stat("Queued", `${m.queue_length}`, "waiting for capacity", m.queue_length > 0, "lim-queue"),
      stat("Admitted", fmtCount(m.total_acquired), Number.isFinite(rate) ? `${rate.toFixed(1)} /s now` : "since the start"),
      stat("Rejected", fmtCount(m.total_rejected), "queue full or reject strategy", m.total_rejected > 0),
      stat("Queue timeouts", fmtCount(m.total_timeout), "waited too long", m.total_timeout > 0),
      stat("Bypassed", fmtCount(m.total_bypassed), "workflow callers"),
      stat("Mean run", fmtMS(m.avg_execution_ms), "per admitted call"));
    clear(chart, h("h2", null, "Last two minutes"), lines(hist, m.limit),
      h("ul", { class: "legend" },
        h("li", null, h("i", { class: "sw lim-cur" }), " in flight"),
        h("li", null, h("i", { class: "sw lim-q" }), " queued"),
        m.limit > 0 ? h("li", null, h("i", { class: "sw lim-limit" }), ` limit ${m.limit}`) : null));
    const names = Object.keys(m.buckets || {}).sort();
    if (!names.length) {
      clear(bucketsEl, empty("No bucket", "Buckets are per tool category, set under limits: in the configuration (see docs/configuration.md)."));
      return;
    }
    clear(bucketsEl, h("table", { class: "table buckets" },
      h("thead", null, h("tr", null, ["Bucket", "In flight", "Queued", "Weight", "Admitted", "Rejected", "Timeouts"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, names.map((n) => {
        const b = m.buckets[n];
        const cap = b.limit > 0 ? b.limit : m.limit;
        return h("tr", { "data-bucket": n },
          h("th", { scope: "row" }, n),
          h("td", null, meter(b.current, cap), h("span", { class: "num small" }, ` ${b.current}${cap > 0 ? ` / ${cap}` : ""}`), b.limit > 0 ? null : h("span", { class: "muted small" }, " (global)")),
          h("td", { class: `num ${b.queue > 0 ? "hot" : ""}` }, String(b.queue)),
          h("td", { class: "num" }, String(b.weight)),
          h("td", { class: "num" }, fmtCount(b.acquired)),
          h("td", { class: "num" }, fmtCount(b.rejected)),
          h("td", { class: "num" }, fmtCount(b.timed_out)));
      }))));
  }

  read();
  const timer = setInterval(read, EVERY);
  let soon = null;
  const off = onEvent((e) => {
    if (/^execution_(started|completed|failed)$/.test(e.type) && !soon) {
      soon = setTimeout(() => { soon = null; read(); }, 150);
    }
  });
  const vis = () => { if (!document.hidden) read(); };
  document.addEventListener("visibilitychange", vis);
  return {
    close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(soon);
      off();
      document.removeEventListener("visibilitychange", vis);
    },
  };
}

function push(a, v) {
  a.push(v);
  if (a.length > KEEP) a.shift();
}

function fmtCount(n) {
  return Number(n || 0).toLocaleString();
}

function stat(label, value, sub, warn, cls) {
  return h("div", { class: `stat ${warn ? "warn" : ""} ${cls || ""}` }, h("div", { class: "stat-label" }, label),
    h("div", { class: "stat-value" }, value), sub ? h("div", { class: "muted small" }, sub) : null);
}

// meter is a small bar of used over capacity.
function meter(used, cap) {
  const m = h("span", { class: "meter", role: "img", "aria-label": cap > 0 ? `${used} of ${cap}` : `${used}` });
  const fill = h("span", { class: `meter-fill ${cap > 0 && used >= cap ? "full" : ""}` });
  fill.style.width = `${cap > 0 ? Math.min(100, (used / cap) * 100) : used > 0 ? 100 : 0}%`;
  m.append(fill);
  return m;
}

// lines draws in flight and queued over the samples kept.
function lines(hist, limit) {
  const W = 760, H = 160, L = 36, R = 8, T = 8, B = 20;
  const max = niceMax(Math.max(1, limit || 0, ...hist.cur, ...hist.queue));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart lim-lines", role: "img",
    "aria-label": `In flight now ${hist.cur.at(-1) ?? 0}, queued ${hist.queue.at(-1) ?? 0}` });
  const pw = W - L - R, ph = H - T - B;
  const y = (v) => T + ph - (v / max) * ph;
  const x = (i) => L + (i / (KEEP - 1)) * pw;
  // Counts are whole: a grid line at each whole quarter of the scale.
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    if (!Number.isInteger(v)) continue;
    svg.append(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: i ? "grid" : "axis" }),
      s("text", { x: L - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, String(v)));
  }
  svg.append(s("text", { x: L, y: H - 4, class: "tick" }, "2 min ago"), s("text", { x: W - R, y: H - 4, class: "tick", "text-anchor": "end" }, "now"));
  if (limit > 0) svg.append(s("line", { x1: L, x2: W - R, y1: y(limit), y2: y(limit), class: "lim-limit-line" }));
  const off = KEEP - hist.cur.length;
  const path = (vals) => vals.map((v, i) => `${i ? "L" : "M"}${x(i + off).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  if (hist.cur.length) {
    svg.append(s("path", { d: path(hist.queue), class: "lim-q-line" }), s("path", { d: path(hist.cur), class: "lim-cur-line" }));
  }
  return svg;
}
