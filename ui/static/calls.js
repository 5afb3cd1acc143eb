// Calls: the live feed of calls as they happen (the event stream), the
// history with filters and paging, and one call's full record.

import { api, authHeaders, qs } from "./api.js";
import { h, clear, codeBlock, empty, errorBox, fmtMS, timeEl, statusPill, fmtTime } from "./dom.js";
import { onEvent, onState } from "./events.js";
import { PREFILL } from "./tools.js";

// The live feed keeps what it saw since the console opened, across pages:
// the calls running (at most runningMax, the oldest dropped past it) and
// the newest max finished.
const live = { running: new Map(), done: [], max: 200, runningMax: 1000 };

// A call's end event can miss the console: the stream drops the events of
// a subscriber that falls behind (saying so in a comment EventSource does
// not show), and a reconnect can miss some. So a call shown running for
// STALE_MS is looked up (GET /v1/calls/{id}: a record exists once it has
// ended, 404 while it runs); one that has a record moves to the finished
// calls with its real status, one that has none is looked up again later,
// twice as late each time up to RECHECK_MAX. Every CHECK_EVERY at most
// CHECKS_AT_ONCE calls are looked up, the longest due first, while the
// page is visible and no lookup of the round before is still out.
const STALE_MS = 15000;
const CHECK_EVERY = 5000;
const CHECKS_AT_ONCE = 4;
const RECHECK_MAX = 5 * 60 * 1000;
const checks = new Map(); // call_id → { at: when to look it up, wait: how long after the last miss }
const changeListeners = new Set(); // told when a lookup changed the feed

// showRunning sets a call's running row, keeping the list within its bound.
function showRunning(id, e) {
  live.running.set(id, e);
  if (id && !checks.has(id)) checks.set(id, { at: Date.now() + STALE_MS, wait: STALE_MS });
  for (const old of live.running.keys()) {
    if (live.running.size <= live.runningMax) break;
    live.running.delete(old);
    checks.delete(old);
  }
}

// finished takes a call off the running list and puts its end in the
// finished list, newest first.
function finished(e) {
  live.running.delete(e.call_id);
  checks.delete(e.call_id);
  // A call that fails validation is told twice (validation_error,
  // then execution_failed): one row, with what both said.
  const i = e.call_id ? live.done.findIndex((d) => d.call_id === e.call_id) : -1;
  if (i >= 0) {
    const prev = live.done[i];
    live.done[i] = { ...prev, ...e, type: e.type === "validation_error" ? prev.type : e.type, error_type: prev.error_type || e.error_type };
    return;
  }
  // An end told late (found by a lookup) goes where its time puts it.
  const t = Date.parse(e.time);
  const at = e.looked_up && Number.isFinite(t) ? live.done.findIndex((d) => !(Date.parse(d.time) > t)) : 0;
  live.done.splice(at < 0 ? live.done.length : at, 0, { ...e });
  if (live.done.length > live.max) live.done.length = live.max;
}

// endOf is the end event a call's record stands for.
function endOf(id, rec, st) {
  const r = rec.result || {};
  const c = rec.call || {};
  const caller = c.caller || {};
  return {
    type: r.ok ? "execution_completed" : "execution_failed", call_id: id, tool: c.tool || st.tool,
    caller_id: caller.id || st.caller_id, conversation_id: caller.conversation_id || st.conversation_id,
    time: r.finished_at || st.time, duration_ms: r.duration_ms, attempts: r.attempts,
    error: r.error, error_type: r.error_type, looked_up: true,
  };
}

// lookUp asks for the record of a call shown running: found, the call
// moves to the finished ones; not found (or not answered), it is looked
// up again later. The request is a plain fetch: a lookup in the
// background never asks the person for a key.
async function lookUp(id, c) {
  let rec = null;
  try {
    const resp = await fetch(`/v1/calls/${encodeURIComponent(id)}`, { headers: { Accept: "application/json", ...authHeaders() }, cache: "no-store" });
    if (resp.ok) rec = await resp.json();
  } catch {
    rec = null;
  }
  const st = live.running.get(id);
  if (!st) return; // its end came meanwhile, or it was dropped
  if (!rec || typeof rec !== "object") {
    c.wait = Math.min(c.wait * 2, RECHECK_MAX);
    c.at = Date.now() + c.wait;
    return;
  }
  finished(endOf(id, rec, st));
  changeListeners.forEach((f) => f());
}

let lookingUp = false;
async function reconcile() {
  if (lookingUp || document.hidden || !checks.size) return;
  const now = Date.now();
  const due = [...checks].filter(([, c]) => c.at <= now).sort((a, b) => a[1].at - b[1].at).slice(0, CHECKS_AT_ONCE);
  if (!due.length) return;
  lookingUp = true;
  try {
    await Promise.all(due.map(([id, c]) => lookUp(id, c)));
  } finally {
    lookingUp = false;
  }
}
setInterval(reconcile, CHECK_EVERY);

onEvent((e) => {
  switch (e.type) {
    case "execution_started":
      showRunning(e.call_id, e);
      break;
    case "execution_completed":
    case "execution_failed":
    case "validation_error":
      finished(e);
      break;
    case "permission_requested":
      showRunning(e.call_id, { ...e, waiting: true });
      break;
    case "permission_decided": {
      const st = live.running.get(e.call_id);
      if (st) live.running.set(e.call_id, { ...st, waiting: false });
      break;
    }
    case "execution_progress": {
      // The row keeps its start; the newest report shows beside it.
      const st = live.running.get(e.call_id);
      if (st) live.running.set(e.call_id, { ...st, progress: e.progress, progress_message: e.message || "" });
      break;
    }
  }
});

// progressEl shows a running call's newest progress report: a bar when the
// tool gave its total, the figures and the tool's message as text.
export function progressEl(e) {
  const p = e.progress;
  const figures = p.total ? `${p.progress} of ${p.total}` : String(p.progress);
  return h("span", { class: "progress-report small" },
    p.total ? h("progress", { value: String(Math.min(p.progress, p.total)), max: String(p.total), "aria-label": `Progress of ${e.tool}` }) : null,
    h("span", { class: "muted" }, e.progress_message ? `${figures}: ${e.progress_message}` : figures));
}

// TYPES are the kinds of rows the live page shows, for its type filter.
const LIVE_TYPES = [
  ["", "any"], ["running", "running"], ["waiting", "awaiting approval"],
  ["execution_completed", "completed"], ["execution_failed", "failed"], ["validation_error", "validation error"],
];

// rowType is a live row's kind, as LIVE_TYPES names it.
function rowType(e) {
  if (e.type === "execution_started") return "running";
  if (e.type === "permission_requested" || e.type === "permission_decided") return e.waiting ? "waiting" : "running";
  return e.type;
}

// liveMatch reports whether a live row passes the filter.
export function liveMatch(e, f) {
  if (f.tool && e.tool !== f.tool) return false;
  if (f.type && rowType(e) !== f.type) return false;
  if (f.status) {
    const done = /^(execution_completed|execution_failed|validation_error)$/.test(e.type);
    if (!done) return false;
    const ok = e.type === "execution_completed";
    if ((f.status === "ok") !== ok) return false;
  }
  const q = (f.q || "").trim().toLowerCase();
  if (q) {
    const hay = [e.tool, e.caller_id, e.conversation_id, e.call_id, e.error, e.error_type, e.message].filter(Boolean).join(" ").toLowerCase();
    if (!q.split(/\s+/).every((w) => hay.includes(w))) return false;
  }
  return true;
}

// livePage renders #/live?tool=&type=&status=&q=: the feed, filtered,
// which a pause freezes while what arrives is counted (the feed itself
// keeps the newest live.max finished calls, paused or not).
export function livePage(main, params = new URLSearchParams()) {
  const f = { tool: params.get("tool") || "", type: params.get("type") || "", status: params.get("status") || "", q: params.get("q") || "" };
  const runningEl = h("div");
  const doneEl = h("div");
  const stateEl = h("p", { class: "muted small", role: "status" });
  const pauseState = h("span", { class: "muted small pause-state", role: "status", "aria-live": "polite" });
  const tool = h("input", { id: "l-tool", type: "text", value: f.tool, autocomplete: "off", spellcheck: "false", placeholder: "any", list: "l-tools" });
  const toolList = h("datalist", { id: "l-tools" });
  const type = h("select", { id: "l-type" }, LIVE_TYPES.map(([v, l]) => h("option", { value: v, selected: v === f.type }, l)));
  const status = h("select", { id: "l-status" }, [["", "any"], ["ok", "ok"], ["error", "error"]].map(([v, l]) => h("option", { value: v, selected: v === f.status }, l)));
  const text = h("input", { id: "l-q", type: "search", value: f.q, autocomplete: "off", spellcheck: "false", placeholder: "caller, conversation, error, call ID" });
  const pauseBtn = h("button", { type: "button", class: "ghost", id: "live-pause", "aria-pressed": "false", onclick: () => setPaused(!paused) }, "Pause");
  const apply = () => {
    f.tool = tool.value.trim();
    f.type = type.value;
    f.status = status.value;
    f.q = text.value;
    // The filter stays in the address (no new history entry, no redraw of
    // the page), so a reload or a link keeps it.
    history.replaceState(null, "", "#/live" + qs(f));
    draw();
  };
  for (const el of [tool, text]) el.addEventListener("input", apply);
  for (const el of [type, status]) el.addEventListener("change", apply);
  const form = h("form", { class: "filters-row card live-filters", role: "search", "aria-label": "Filter the live calls", onsubmit: (ev) => ev.preventDefault() },
    field("l-tool", "Tool", tool), toolList, field("l-type", "Type", type), field("l-status", "Status", status), field("l-q", "Text", text),
    h("div", { class: "filter-actions" }, pauseBtn, pauseState));
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Live calls"), stateEl),
    form,
    h("section", { class: "card", "aria-labelledby": "running-h" }, h("h2", { id: "running-h" }, "Running now"), runningEl),
    h("section", { class: "card", "aria-labelledby": "done-h" }, h("h2", { id: "done-h" }, "Finished since this page opened"), doneEl));
  api("/v1/tools").then((r) => clear(toolList, (r.tools || []).map((t) => h("option", { value: t.name })))).catch(() => {});

  // While paused, the page shows what it showed when paused; events keep
  // coming into the feed (bounded as always) and are counted.
  let paused = false;
  let frozen = null;
  let arrived = 0; // events
  let ended = 0; // of which calls that finished: past live.max, the oldest drop
  function setPaused(p) {
    paused = p;
    pauseBtn.setAttribute("aria-pressed", String(p));
    pauseBtn.textContent = p ? "Resume" : "Pause";
    main.classList.toggle("paused", p);
    arrived = 0;
    ended = 0;
    frozen = p ? { running: [...live.running.values()], done: [...live.done] } : null;
    showPause();
    draw();
  }
  function showPause() {
    pauseState.textContent = paused
      ? `Paused: ${arrived} event${arrived === 1 ? "" : "s"} arrived${ended > live.max ? `; of the ${ended} calls that finished, the newest ${live.max} are kept` : ""}`
      : "";
    pauseState.dataset.arrived = String(arrived);
  }

  function draw() {
    const src = frozen || { running: [...live.running.values()], done: live.done };
    const running = src.running.filter((e) => liveMatch(e, f));
    const done = src.done.filter((e) => liveMatch(e, f));
    const filtered = Object.values(f).some(Boolean);
    clear(runningEl, running.length
      ? h("ul", { class: "feed" }, running.map((e) => h("li", { class: "feed-item running" },
          h("span", { class: e.waiting ? "pill wait" : "pill run" }, e.waiting ? "awaiting approval" : "running"),
          h("a", { href: `#/tools/${encodeURIComponent(e.tool)}`, class: "strong" }, e.tool),
          h("span", { class: "muted" }, e.caller_id ? `by ${e.caller_id}` : ""),
          h("span", { class: "muted" }, "since ", timeEl(e.time, false)),
          e.progress ? progressEl(e) : null,
          e.waiting ? h("a", { href: "#/approvals", class: "small" }, "Decide →") : null)))
      : empty(filtered && src.running.length ? "No running call matches the filter" : "Nothing is running", "Calls appear here the moment they start."));
    clear(doneEl, done.length
      ? h("table", { class: "table live" },
          h("thead", null, h("tr", null, ["Time", "Tool", "Status", "Duration", "Caller", "Call"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, done.map((e) => h("tr", null,
            h("td", null, timeEl(e.time, false)),
            h("td", null, h("a", { href: `#/tools/${encodeURIComponent(e.tool)}` }, e.tool)),
            h("td", null, statusPill(e.type === "execution_completed", e.error_type || (e.type === "validation_error" ? "validation_error" : "")),
              e.error ? h("span", { class: "muted small clip", title: e.error }, ` ${e.error}`) : null),
            h("td", { class: "num" }, fmtMS(e.duration_ms)),
            h("td", null, e.caller_id || "—", e.conversation_id ? h("span", { class: "muted small" }, ` · ${e.conversation_id}`) : null),
            h("td", null, e.call_id ? h("a", { href: `#/calls/${encodeURIComponent(e.call_id)}`, class: "mono small" }, short(e.call_id)) : "—")))))
      : filtered && src.done.length
        ? empty("No finished call matches the filter", `${src.done.length} finished call${src.done.length === 1 ? "" : "s"} hidden by it.`)
        : empty("No call finished yet", "Try a tool, or let an agent work: each call shows up here as it ends."));
  }
  draw();
  // A burst of events (hundreds come in one read) is one draw.
  let soon = null;
  const drawSoon = () => {
    if (!soon) soon = setTimeout(() => { soon = null; if (!paused) draw(); }, 50);
  };
  const offE = onEvent((e) => {
    if (!/^(execution_|validation_error|permission_)/.test(e.type)) return;
    if (paused) {
      arrived++;
      if (/^execution_(completed|failed)$/.test(e.type)) ended++;
      showPause();
      return;
    }
    drawSoon();
  });
  // A call moved by a lookup (its end event never came) shows at once,
  // unless the page is paused.
  const onChange = () => { if (!paused) drawSoon(); };
  changeListeners.add(onChange);
  const offS = onState((s) => {
    stateEl.textContent = s === "live" ? "Connected to the event stream." : s === "down" ? "The event stream is down; trying again." : "Connecting to the event stream…";
  });
  return { close() { offE(); offS(); changeListeners.delete(onChange); clearTimeout(soon); main.classList.remove("paused"); } };
}

// short is the end of an ID: engine IDs are time-ordered, so their
// beginnings are alike and their ends tell them apart.
function short(id) {
  return id.length > 10 ? `…${id.slice(-8)}` : id;
}

// historyPage renders #/calls?tool=&status=&conversation=&since=&until=&cursor=.
export function historyPage(main, params) {
  const f = {
    conversation: params.get("conversation") || "",
    tool: params.get("tool") || "",
    status: params.get("status") || "",
    since: params.get("since") || "",
    until: params.get("until") || "",
    caller: params.get("caller") || "",
  };
  const cursor = params.get("cursor") || "";
  // prev holds the cursors of the pages before this one, each encoded, so
  // that "← Newer" goes back; the API's cursors only go forward.
  const prev = (params.get("prev") || "").split(",").filter((x) => x !== "").map(decodeURIComponent);
  const joinPrev = (list) => list.map(encodeURIComponent).join(",");

  const conv = h("input", { id: "h-conv", type: "text", value: f.conversation, autocomplete: "off", spellcheck: "false", placeholder: "any" });
  const tool = h("input", { id: "h-tool", type: "text", value: f.tool, autocomplete: "off", spellcheck: "false", placeholder: "any", list: "h-tools" });
  const toolList = h("datalist", { id: "h-tools" });
  const status = h("select", { id: "h-status" },
    [["", "any"], ["ok", "ok"], ["error", "error"]].map(([v, l]) => h("option", { value: v, selected: v === f.status }, l)));
  const ranges = [["", "any time"], ["15m", "last 15 min"], ["1h", "last hour"], ["24h", "last 24 h"], ["168h", "last 7 days"]];
  const isRange = ranges.some(([v]) => v === f.since);
  const since = h("select", { id: "h-since" },
    ranges.map(([v, l]) => h("option", { value: v, selected: v === f.since }, l)),
    isRange ? null : h("option", { value: f.since, selected: true }, `since ${fmtTime(f.since)}`));
  const from = h("input", { id: "h-from", type: "datetime-local", value: isRange ? "" : toLocalInput(f.since) });
  const until = h("input", { id: "h-until", type: "datetime-local", value: toLocalInput(f.until) });
  since.addEventListener("change", () => { if (since.value) from.value = ""; });

  const tableEl = h("div", { class: "table-wrap" }, h("p", { class: "muted" }, "Loading calls…"));
  const pager = h("nav", { class: "pager", "aria-label": "Pages" });

  const form = h("form", { class: "filters-row card", role: "search", "aria-label": "Filter calls", onsubmit: (ev) => {
    ev.preventDefault();
    const sinceV = from.value ? new Date(from.value).toISOString() : since.value;
    const untilV = until.value ? new Date(until.value).toISOString() : "";
    location.hash = "#/calls" + qs({ tool: tool.value.trim(), status: status.value, conversation: conv.value.trim(), since: sinceV, until: untilV, caller: f.caller });
  } },
  field("h-tool", "Tool", tool), toolList, field("h-status", "Status", status), field("h-conv", "Conversation", conv),
  field("h-since", "Time", since), field("h-from", "From", from), field("h-until", "Until", until),
  h("div", { class: "filter-actions" }, h("button", { type: "submit", class: "primary" }, "Apply"),
    h("a", { href: "#/calls", class: "button ghost" }, "Clear")));

  clear(main, h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "History"),
    h("p", { class: "muted" }, "Every call the engine recorded, newest first.")), form, tableEl, pager);

  api("/v1/tools").then((r) => clear(toolList, (r.tools || []).map((t) => h("option", { value: t.name })))).catch(() => {});

  async function load() {
    try {
      const r = await api("/v1/calls" + qs({ ...f, cursor, limit: 50 }));
      draw(r);
    } catch (e) {
      clear(tableEl, errorBox(e, load));
    }
  }

  function draw(r) {
    const calls = r.calls || [];
    if (!calls.length) {
      const filtered = Object.values(f).some(Boolean);
      clear(tableEl, empty(filtered ? "No call matches these filters" : "No call recorded yet",
        filtered ? "Widen the time range or clear a filter." : "Calls made through the API, by agents or from the Tools page land here."));
    } else {
      clear(tableEl, h("table", { class: "table calls" },
        h("caption", { class: "sr-only" }, "Recorded calls"),
        h("thead", null, h("tr", null, ["Queued", "Tool", "Status", "Duration", "Attempts", "Caller", "Conversation", "Call"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", null, calls.map((rec) => {
          const c = rec.call || {};
          const res = rec.result || {};
          const href = `#/calls/${encodeURIComponent(c.id)}`;
          return h("tr", { class: "clickable", onclick: (ev) => { if (!ev.target.closest("a")) location.hash = href; } },
            h("td", null, timeEl(rec.queued_at)),
            h("td", null, h("a", { href: `#/calls${qs({ ...f, tool: c.tool })}` , title: `Only ${c.tool}` }, c.tool)),
            h("td", null, statusPill(res.ok, res.error_type)),
            h("td", { class: "num" }, fmtMS(res.duration_ms)),
            h("td", { class: "num" }, res.attempts ?? "—"),
            h("td", null, (c.caller && c.caller.id) || "—"),
            h("td", null, c.caller && c.caller.conversation_id
              ? h("a", { href: `#/calls${qs({ ...f, conversation: c.caller.conversation_id })}` }, c.caller.conversation_id) : "—"),
            h("td", null, h("a", { href, class: "mono small", "aria-label": `Call ${c.id} of ${c.tool}` }, short(c.id))));
        }))));
    }
    const base = { ...f };
    clear(pager,
      cursor ? h("a", { class: "button ghost", href: "#/calls" + qs({ ...base, cursor: prev[prev.length - 1] || "", prev: joinPrev(prev.slice(0, -1)) }) }, "← Newer") : h("span"),
      h("span", { class: "muted small" }, cursor ? `page ${prev.length + 2}` : "page 1"),
      r.next ? h("a", { class: "button ghost", href: "#/calls" + qs({ ...base, cursor: r.next, prev: joinPrev([...prev, cursor]) }) }, "Older →") : h("span"));
  }
  load();
  return {};
}

function field(id, label, input) {
  return h("div", { class: "field" }, h("label", { for: id, class: "field-label" }, label), input);
}

function toLocalInput(t) {
  if (!t) return "";
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return "";
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

// callPage renders #/calls/ID: the whole record of one call.
export function callPage(main, id) {
  clear(main, h("p", { class: "muted" }, "Loading the call…"));
  async function load() {
    try {
      // The record does not name its approval: the approvals of the call
      // do (none for a tool that needed no one's).
      const [rec, aps] = await Promise.all([api(`/v1/calls/${encodeURIComponent(id)}`),
        api(`/v1/approvals${qs({ call_id: id })}`).catch(() => null)]);
      draw(rec, aps && (aps.approvals || []).find((a) => a.status !== "pending"));
    } catch (e) {
      clear(main, h("a", { href: "#/calls", class: "back small" }, "← History"),
        e.status === 404 ? empty(`No call “${id}”`, "Its record may not be written yet, or it was never made.") : errorBox(e, load));
    }
  }
  function draw(rec, ap) {
    const c = rec.call || {};
    const r = rec.result || {};
    const caller = c.caller || {};
    const queued = new Date(rec.queued_at).getTime();
    const started = new Date(r.started_at).getTime();
    const finished = new Date(r.finished_at).getTime();
    const asked = ap ? new Date(ap.created_at).getTime() : NaN;
    const decided = ap ? new Date(ap.decided_at || ap.expires_at).getTime() : NaN;
    const d = (ap && ap.decision) || {};
    let args = c.arguments;
    let parsedArgs;
    try { parsedArgs = typeof args === "string" ? JSON.parse(args) : args; } catch { parsedArgs = undefined; }
    clear(main,
      h("a", { href: "#/calls", class: "back small" }, "← History"),
      h("header", { class: "page-head" },
        h("h1", { tabindex: "-1" }, h("a", { href: `#/tools/${encodeURIComponent(c.tool)}` }, c.tool), " ", statusPill(r.ok, r.error_type)),
        h("p", { class: "mono small muted" }, c.id)),
      h("div", { class: "stat-cards" },
        stat("Duration", fmtMS(r.duration_ms)),
        ap ? stat("Approval wait", fmtMS(Math.max(decided - asked, 0))) : null,
        stat("Queue wait", fmtMS(r.queue_wait_ms || 0)),
        stat("Attempts", String(r.attempts ?? "—")),
        stat("Queued", fmtTime(rec.queued_at))),
      timeline(queued, started, finished, ap ? { asked, decided, status: ap.status } : null),
      ap ? h("section", { class: "card approval-facts", "aria-labelledby": "apf-h" }, h("h2", { id: "apf-h" }, "Approval"),
        h("dl", { class: "facts" },
          fact("Outcome", h("span", { class: `pill ${ap.status === "approved" ? "ok" : ap.status === "denied" ? "err" : "wait"}` }, ap.status)),
          // by is the decider as the server knows them; note is the
          // deciding client's own text, shown apart and as such.
          fact("By", d.by ? h("span", { class: "decided-by" }, d.by) : h("span", { class: "muted" }, ap.status === "expired" ? "nobody: it expired" : "—")),
          d.note ? fact("Note", h("span", { class: "decided-note" }, d.note)) : null,
          d.reason ? fact("Reason", d.reason) : null,
          fact("Asked", fmtTime(ap.created_at)),
          fact("Decided", fmtTime(ap.decided_at || ap.expires_at)),
          ap.requested_by ? fact("Asked with key", h("code", { class: "small" }, ap.requested_by)) : null,
          fact("Approval", h("code", { class: "small" }, ap.id)))) : null,
      !r.ok ? h("section", { class: "card err-card", "aria-labelledby": "err-h" }, h("h2", { id: "err-h" }, "Error"),
        h("p", null, h("code", null, r.error_type || "error"), " ", r.error || ""),
        r.validation_errors && r.validation_errors.length
          ? h("ul", { class: "verrs" }, r.validation_errors.map((v) => h("li", null, v.path ? [h("code", null, v.path), ": "] : null, v.message))) : null) : null,
      h("div", { class: "two-col" },
        h("section", { class: "card" }, h("h2", null, "Arguments"), h("p", { class: "muted small" }, "As sent (secrets redacted)."), codeBlock(c.arguments ?? {}, "Arguments"),
          rec.arguments && JSON.stringify(rec.arguments) !== JSON.stringify(c.arguments)
            ? [h("h3", null, "After coercion and defaults"), codeBlock(rec.arguments, "Coerced arguments")] : null),
        h("section", { class: "card" }, h("h2", null, "Output"),
          rec.full_output ? h("p", { class: "muted small" }, "The model got a cut version; this is the whole output.") : null,
          rec.full_output !== undefined || r.output !== undefined ? codeBlock(rec.full_output ?? r.output, "Output") : h("p", { class: "muted" }, "No output."))),
      h("section", { class: "card" }, h("h2", null, "Details"),
        h("dl", { class: "facts" },
          caller.id || caller.type || !caller.user_id
            ? fact("Caller", [caller.id || (caller.type ? "" : "—"), caller.type ? h("span", { class: "muted" }, caller.id ? ` (${caller.type})` : caller.type) : null]) : null,
          caller.conversation_id ? fact("Conversation", h("a", { href: `#/calls${qs({ conversation: caller.conversation_id })}` }, caller.conversation_id)) : null,
          caller.workflow_id ? fact("Workflow", caller.workflow_id) : null,
          caller.user_id ? fact("User", caller.user_id) : null,
          fact("Started", fmtTime(r.started_at)),
          fact("Finished", fmtTime(r.finished_at)),
          rec.tool_version ? fact("Tool version", rec.tool_version) : null,
          rec.category ? fact("Category", rec.category) : null,
          c.idempotency_key ? fact("Idempotency key", h("code", null, c.idempotency_key)) : null,
          c.approval_id ? fact("Approval", h("code", null, c.approval_id)) : null,
          rec.digest ? fact("Digest", h("code", { class: "small" }, rec.digest)) : null),
        r.metadata && Object.keys(r.metadata).length ? [h("h3", null, "Metadata"), codeBlock(r.metadata, "Metadata")] : null),
      parsedArgs && typeof parsedArgs === "object"
        ? h("p", null, h("a", { href: `#/tools/${encodeURIComponent(c.tool)}`, class: "button", onclick: () => sessionStorage.setItem(PREFILL, JSON.stringify({ tool: c.tool, arguments: parsedArgs })) }, "Try again with these arguments"))
        : null);
  }
  load();
  return {};
}

function stat(label, value) {
  return h("div", { class: "stat" }, h("div", { class: "stat-label" }, label), h("div", { class: "stat-value" }, value));
}

function fact(k, v) {
  return [h("dt", null, k), h("dd", null, v)];
}

// timeline draws queued → started → finished as one bar. The engine sets
// started when the call is admitted, after its approval when it needed
// one: that wait for a person (asked → decided) is its own segment, and
// only the rest of queued → started is queue.
function timeline(q, s, f, ap) {
  if (![q, s, f].every(Number.isFinite) || f < q) return null;
  const total = Math.max(f - q, 1);
  const run = Math.max(f - Math.max(s, q), 0);
  const segs = [];
  if (ap && Number.isFinite(ap.asked) && Number.isFinite(ap.decided)) {
    const asked = Math.min(Math.max(ap.asked, q), f);
    const decided = Math.min(Math.max(ap.decided, asked), f);
    const admitted = Math.max(s, decided);
    segs.push(["tl-wait", "queued → asked", asked - q], ["tl-approval", `waiting for approval (${ap.status})`, decided - asked],
      ["tl-wait", "decided → started", Math.max(Math.min(admitted, f) - decided, 0)]);
  } else {
    segs.push(["tl-wait", "queued → started", Math.max(s - q, 0)]);
  }
  segs.push(["tl-run", "started → finished", run]);
  const shown = segs.filter(([, , ms], i) => ms > 0 || i === segs.length - 1 || (ap && i === 1));
  const bar = h("div", { class: "timeline", role: "img", "aria-label": shown.map(([, l, ms]) => `${l} ${fmtMS(ms)}`).join(", ") });
  for (const [cls, l, ms] of shown) {
    const el = h("span", { class: cls, title: `${l}: ${fmtMS(ms)}` });
    el.style.width = `${Math.max((ms / total) * 100, cls === "tl-run" ? 0.5 : 0)}%`;
    bar.append(el);
  }
  return h("div", { class: "timeline-box" }, bar,
    h("div", { class: "timeline-legend small muted" },
      shown.map(([cls, l, ms]) => h("span", null, h("i", { class: `sw ${cls}` }), ` ${l} ${fmtMS(ms)}`))));
}
