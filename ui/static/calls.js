// Calls: the live feed of calls as they happen (the event stream), the
// history with filters and paging, and one call's full record.

import { api, qs } from "./api.js";
import { h, clear, codeBlock, empty, errorBox, fmtMS, timeEl, statusPill, fmtTime } from "./dom.js";
import { onEvent, onState } from "./events.js";
import { PREFILL } from "./tools.js";

// The live feed keeps what it saw since the console opened, across pages.
const live = { running: new Map(), done: [], max: 200 };

onEvent((e) => {
  switch (e.type) {
    case "execution_started":
      live.running.set(e.call_id, e);
      break;
    case "execution_completed":
    case "execution_failed":
    case "validation_error": {
      live.running.delete(e.call_id);
      // A call that fails validation is told twice (validation_error,
      // then execution_failed): one row, with what both said.
      const i = e.call_id ? live.done.findIndex((d) => d.call_id === e.call_id) : -1;
      if (i >= 0) {
        const prev = live.done[i];
        live.done[i] = { ...prev, ...e, type: e.type === "validation_error" ? prev.type : e.type, error_type: prev.error_type || e.error_type };
        break;
      }
      live.done.unshift({ ...e });
      if (live.done.length > live.max) live.done.length = live.max;
      break;
    }
    case "permission_requested":
      live.running.set(e.call_id, { ...e, waiting: true });
      break;
    case "permission_decided": {
      const st = live.running.get(e.call_id);
      if (st) live.running.set(e.call_id, { ...st, waiting: false });
      break;
    }
  }
});

// livePage renders #/live.
export function livePage(main) {
  const runningEl = h("div");
  const doneEl = h("div");
  const stateEl = h("p", { class: "muted small", role: "status" });
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Live calls"), stateEl),
    h("section", { class: "card", "aria-labelledby": "running-h" }, h("h2", { id: "running-h" }, "Running now"), runningEl),
    h("section", { class: "card", "aria-labelledby": "done-h" }, h("h2", { id: "done-h" }, "Finished since this page opened"), doneEl));

  function draw() {
    const running = [...live.running.values()];
    clear(runningEl, running.length
      ? h("ul", { class: "feed" }, running.map((e) => h("li", { class: "feed-item running" },
          h("span", { class: e.waiting ? "pill wait" : "pill run" }, e.waiting ? "awaiting approval" : "running"),
          h("a", { href: `#/tools/${encodeURIComponent(e.tool)}`, class: "strong" }, e.tool),
          h("span", { class: "muted" }, e.caller_id ? `by ${e.caller_id}` : ""),
          h("span", { class: "muted" }, "since ", timeEl(e.time, false)),
          e.waiting ? h("a", { href: "#/approvals", class: "small" }, "Decide →") : null)))
      : empty("Nothing is running", "Calls appear here the moment they start."));
    clear(doneEl, live.done.length
      ? h("table", { class: "table" },
          h("thead", null, h("tr", null, ["Time", "Tool", "Status", "Duration", "Caller", "Call"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", null, live.done.map((e) => h("tr", null,
            h("td", null, timeEl(e.time, false)),
            h("td", null, h("a", { href: `#/tools/${encodeURIComponent(e.tool)}` }, e.tool)),
            h("td", null, statusPill(e.type === "execution_completed", e.error_type || (e.type === "validation_error" ? "validation_error" : "")),
              e.error ? h("span", { class: "muted small clip", title: e.error }, ` ${e.error}`) : null),
            h("td", { class: "num" }, fmtMS(e.duration_ms)),
            h("td", null, e.caller_id || "—", e.conversation_id ? h("span", { class: "muted small" }, ` · ${e.conversation_id}`) : null),
            h("td", null, e.call_id ? h("a", { href: `#/calls/${encodeURIComponent(e.call_id)}`, class: "mono small" }, short(e.call_id)) : "—")))))
      : empty("No call finished yet", "Try a tool, or let an agent work: each call shows up here as it ends."));
  }
  draw();
  const offE = onEvent((e) => {
    if (/^(execution_|validation_error|permission_)/.test(e.type)) draw();
  });
  const offS = onState((s) => {
    stateEl.textContent = s === "live" ? "Connected to the event stream." : s === "down" ? "The event stream is down; trying again." : "Connecting to the event stream…";
  });
  return { close() { offE(); offS(); } };
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
      draw(await api(`/v1/calls/${encodeURIComponent(id)}`));
    } catch (e) {
      clear(main, h("a", { href: "#/calls", class: "back small" }, "← History"),
        e.status === 404 ? empty(`No call “${id}”`, "Its record may not be written yet, or it was never made.") : errorBox(e, load));
    }
  }
  function draw(rec) {
    const c = rec.call || {};
    const r = rec.result || {};
    const caller = c.caller || {};
    const queued = new Date(rec.queued_at).getTime();
    const started = new Date(r.started_at).getTime();
    const finished = new Date(r.finished_at).getTime();
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
        stat("Queue wait", fmtMS(r.queue_wait_ms || 0)),
        stat("Attempts", String(r.attempts ?? "—")),
        stat("Queued", fmtTime(rec.queued_at))),
      timeline(queued, started, finished),
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
          fact("Caller", [caller.id || "—", caller.type ? h("span", { class: "muted" }, ` (${caller.type})`) : null]),
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
// started when the call is admitted (after an approval, when one was
// given), so the first span holds the queue and any wait for a person.
function timeline(q, s, f) {
  if (![q, s, f].every(Number.isFinite) || f < q) return null;
  const total = Math.max(f - q, 1);
  const wait = Math.max(s - q, 0);
  const run = Math.max(f - Math.max(s, q), 0);
  const bar = h("div", { class: "timeline", role: "img", "aria-label": `Queued to started ${fmtMS(wait)}, started to finished ${fmtMS(run)}` });
  const w1 = h("span", { class: "tl-wait" });
  const w2 = h("span", { class: "tl-run" });
  w1.style.width = `${(wait / total) * 100}%`;
  w2.style.width = `${Math.max((run / total) * 100, 0.5)}%`;
  bar.append(w1, w2);
  return h("div", { class: "timeline-box" }, bar,
    h("div", { class: "timeline-legend small muted" },
      h("span", null, h("i", { class: "sw tl-wait" }), ` queued → started ${fmtMS(wait)}`),
      h("span", null, h("i", { class: "sw tl-run" }), ` started → finished ${fmtMS(run)}`)));
}
