// Statistics: the figures of GET /v1/statistics (counts, success rate,
// latency percentiles per tool) and the calls over time, bucketed here
// from GET /v1/calls because the API has no time series.

import { api, qs } from "./api.js";
import { h, clear, empty, errorBox, fmtMS, debounce } from "./dom.js";
import { timeBars, hBars, legend } from "./charts.js";

const RANGES = [
  { v: "15m", label: "Last 15 min", ms: 900e3, bucket: 15e3 },
  { v: "1h", label: "Last hour", ms: 3600e3, bucket: 60e3 },
  { v: "24h", label: "Last 24 hours", ms: 86400e3, bucket: 1800e3 },
  { v: "168h", label: "Last 7 days", ms: 7 * 86400e3, bucket: 6 * 3600e3 },
];

// MAX_PAGES bounds how many pages of 1000 calls the time series reads.
const MAX_PAGES = 5;

// page renders #/stats?range=.
export function page(main, params) {
  const range = RANGES.find((r) => r.v === params.get("range")) || RANGES[1];
  const body = h("div", { class: "stats-body" }, h("p", { class: "muted" }, "Loading statistics…"));
  clear(main,
    h("header", { class: "page-head row" },
      h("div", null, h("h1", { tabindex: "-1" }, "Statistics"), h("p", { class: "muted" }, "Calls, latency and errors per tool.")),
      h("div", { class: "seg", role: "group", "aria-label": "Time range" }, RANGES.map((r) => h("a", {
        href: `#/stats?range=${r.v}`, class: "button ghost small", "aria-current": r === range ? "true" : null,
      }, r.label)))),
    body);

  async function load() {
    const now = Date.now();
    const since = new Date(now - range.ms).toISOString();
    try {
      const [st, series] = await Promise.all([api("/v1/statistics" + qs({ since })), timeSeries(since, now, range)]);
      draw(st, series);
    } catch (e) {
      clear(body, errorBox(e, load));
    }
  }

  let last = null;
  function draw(st, series) {
    last = [st, series];
    // The charts are drawn to the width they get, and again when it changes.
    const full = Math.max(280, body.clientWidth - 42);
    const half = window.matchMedia("(max-width: 900px)").matches ? full : (body.clientWidth - 16) / 2 - 42;
    const o = st.overall || {};
    if (!o.count) {
      clear(body, empty(`No call in the ${range.label.toLowerCase()}`, "Make some calls, or choose a longer range."));
      return;
    }
    const tools = Object.entries(st.tools || {}).map(([name, v]) => ({ name, ...v })).sort((a, b) => b.count - a.count);
    const fmtTick = (d, long) => long
      ? d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })
      : range.ms > 86400e3 ? d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + d.toLocaleTimeString([], { hour: "2-digit" })
        : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const errRate = o.count ? (o.failures / o.count) * 100 : 0;
    const latSeries = [
      { key: "p50_ms", label: "p50", cls: "s-p50" },
      { key: "p95_ms", label: "p95", cls: "s-p95" },
      { key: "max_ms", label: "max", cls: "s-max" },
    ];
    clear(body,
      h("div", { class: "stat-cards" },
        card("Calls", o.count.toLocaleString()),
        card("Success rate", `${(o.success_rate ?? 0).toFixed(1)} %`, errRate > 5 ? "warn" : ""),
        card("Failures", o.failures.toLocaleString(), o.failures ? "warn" : ""),
        card("p50 latency", fmtMS(o.p50_ms)),
        card("p95 latency", fmtMS(o.p95_ms)),
        card("Max latency", fmtMS(o.max_ms))),
      h("section", { class: "card", "aria-labelledby": "ts-h" },
        h("div", { class: "card-head" }, h("h2", { id: "ts-h" }, "Calls over time"),
          legend([{ label: "ok", cls: "bar-ok" }, { label: "failed", cls: "bar-err" }])),
        series.truncated ? h("p", { class: "muted small" }, `Drawn from the newest ${series.read.toLocaleString()} calls of the range.`) : null,
        timeBars(series.buckets, { label: `Calls over time, ${range.label.toLowerCase()}`, fmtTick, width: full })),
      h("div", { class: "two-col" },
        h("section", { class: "card", "aria-labelledby": "lat-h" },
          h("div", { class: "card-head" }, h("h2", { id: "lat-h" }, "Latency per tool"), legend(latSeries)),
          hBars(tools.map((t) => ({ name: t.name, values: latSeries.map((se) => t[se.key] || 0) })), latSeries,
            { label: "Latency percentiles per tool", fmt: fmtMS, log: true, width: half })),
        h("section", { class: "card", "aria-labelledby": "er-h" },
          h("div", { class: "card-head" }, h("h2", { id: "er-h" }, "Error rate per tool")),
          hBars(tools.map((t) => ({ name: t.name, values: [t.count ? (t.failures / t.count) * 100 : 0] })),
            [{ key: "rate", label: "error rate", cls: "s-err" }],
            { label: "Error rate per tool", fmt: (v) => `${v.toFixed(1)} %`, max: 100, width: half }))),
      h("section", { class: "card", "aria-labelledby": "tbl-h" },
        h("h2", { id: "tbl-h" }, "Per tool"),
        h("div", { class: "table-wrap" }, h("table", { class: "table" },
          h("thead", null, h("tr", null, ["Tool", "Calls", "Failures", "Success", "p50", "p95", "Max"].map((c, i) => h("th", { scope: "col", class: i ? "num" : null }, c)))),
          h("tbody", null, tools.map((t) => h("tr", null,
            h("th", { scope: "row" }, h("a", { href: `#/calls?tool=${encodeURIComponent(t.name)}` }, t.name)),
            h("td", { class: "num" }, t.count.toLocaleString()),
            h("td", { class: "num" }, t.failures ? h("a", { href: `#/calls?tool=${encodeURIComponent(t.name)}&status=error` }, t.failures.toLocaleString()) : "0"),
            h("td", { class: "num" }, `${(t.success_rate ?? 0).toFixed(1)} %`),
            h("td", { class: "num" }, fmtMS(t.p50_ms)),
            h("td", { class: "num" }, fmtMS(t.p95_ms)),
            h("td", { class: "num" }, fmtMS(t.max_ms)))))))),
    );
  }
  load();
  const onResize = debounce(() => { if (last) draw(...last); }, 150);
  window.addEventListener("resize", onResize);
  return { close() { window.removeEventListener("resize", onResize); } };
}

function card(label, value, cls = "") {
  return h("div", { class: `stat ${cls}` }, h("div", { class: "stat-label" }, label), h("div", { class: "stat-value" }, value));
}

// timeSeries reads the calls of the range (at most MAX_PAGES pages) and
// counts them per bucket by the time they were queued.
async function timeSeries(since, now, range) {
  const n = Math.round(range.ms / range.bucket);
  const end = Math.ceil(now / range.bucket) * range.bucket;
  const start = end - n * range.bucket;
  const buckets = Array.from({ length: n }, (_, i) => ({
    start: new Date(start + i * range.bucket), end: new Date(start + (i + 1) * range.bucket), ok: 0, err: 0,
  }));
  let cursor = "";
  let read = 0;
  let truncated = false;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await api("/v1/calls" + qs({ since, limit: 1000, cursor }));
    for (const rec of r.calls || []) {
      read++;
      const t = new Date(rec.queued_at).getTime();
      const i = Math.floor((t - start) / range.bucket);
      if (i < 0 || i >= n) continue;
      if (rec.result && rec.result.ok) buckets[i].ok++;
      else buckets[i].err++;
    }
    if (!r.next) break;
    cursor = r.next;
    if (page === MAX_PAGES - 1) truncated = true;
  }
  return { buckets, read, truncated };
}
