// Tools: the registry, searchable and filtered by category and tag, and a
// tool's page with its schema drawn as a form that calls it ("Try it").

import { api, ApiError } from "./api.js";
import { h, clear, codeBlock, empty, errorBox, fmtMS, statusPill, debounce, pretty } from "./dom.js";
import { SchemaForm } from "./form.js";
import { onEvent } from "./events.js";
import { who, can, lacks } from "./who.js";

const state = { tools: null, q: "", category: "", tags: new Set(), loading: null };

// PREFILL is where a call's page leaves arguments for "Try again".
export const PREFILL = "wield.prefill";

async function loadTools(force) {
  if (state.tools && !force) return state.tools;
  if (!state.loading || force) {
    state.loading = api("/v1/tools").then((r) => {
      state.tools = (r.tools || []).sort((a, b) => a.name.localeCompare(b.name));
      return state.tools;
    }).finally(() => (state.loading = null));
  }
  return state.loading;
}

function matches(t) {
  if (state.category && (t.category || "") !== state.category) return false;
  for (const tag of state.tags) if (!(t.tags || []).includes(tag)) return false;
  const q = state.q.trim().toLowerCase();
  if (!q) return true;
  const hay = [t.name, t.description, t.category, ...(t.tags || [])].join(" ").toLowerCase();
  return q.split(/\s+/).every((w) => hay.includes(w));
}

// page renders #/tools and #/tools/NAME into main; it returns an object
// whose update(name) shows another tool without drawing the list again,
// and whose close() stops what the page listens to.
export function page(main, name) {
  const listEl = h("ul", { class: "tool-list", "aria-label": "Tools" });
  const countEl = h("p", { class: "muted small", role: "status" });
  const detail = h("section", { class: "tool-detail", "aria-live": "polite" });
  const search = h("input", {
    type: "search", placeholder: "Search tools", "aria-label": "Search tools", value: state.q, autocomplete: "off",
    oninput: debounce(() => { state.q = search.value; drawList(); }, 80),
  });
  const catSel = h("select", { "aria-label": "Category", onchange: () => { state.category = catSel.value; drawList(); } });
  const tagBox = h("div", { class: "tags", role: "group", "aria-label": "Tags" });
  const side = h("aside", { class: "tool-side", "aria-labelledby": "tools-h" },
    h("h1", { id: "tools-h", class: "sr-only", tabindex: "-1" }, "Tools"),
    h("div", { class: "filters", role: "search" }, search, catSel, tagBox), countEl, listEl);
  const layout = h("div", { class: "tools-layout" }, side, detail);
  clear(main, layout);
  let current = name;
  let active = null; // the tool page's own controller

  function drawFilters() {
    const tools = state.tools || [];
    const cats = [...new Set(tools.map((t) => t.category).filter(Boolean))].sort();
    clear(catSel, h("option", { value: "" }, "All categories"), cats.map((c) => h("option", { value: c, selected: c === state.category }, c)));
    const tags = [...new Set(tools.flatMap((t) => t.tags || []))].sort();
    clear(tagBox, tags.map((tag) => h("button", {
      type: "button", class: "chip", "aria-pressed": state.tags.has(tag) ? "true" : "false",
      onclick: (ev) => {
        if (state.tags.has(tag)) state.tags.delete(tag);
        else state.tags.add(tag);
        ev.currentTarget.setAttribute("aria-pressed", state.tags.has(tag) ? "true" : "false");
        drawList();
      },
    }, tag)));
  }

  function drawList() {
    const tools = (state.tools || []).filter(matches);
    countEl.textContent = `${tools.length} of ${(state.tools || []).length} tools`;
    if (!tools.length) {
      clear(listEl, h("li", null, (state.tools || []).length
        ? empty("No tool matches", "Clear the search or the filters.")
        : empty("No tools", "This server has no tool registered, or your key reaches none.")));
      return;
    }
    clear(listEl, tools.map((t) => h("li", null, h("a", {
      href: `#/tools/${encodeURIComponent(t.name)}`, class: "tool-item", "aria-current": t.name === current ? "page" : null,
    }, h("span", { class: "tool-name" }, t.name, t.permission && t.permission !== "auto" ? h("span", { class: `perm perm-${t.permission}` }, t.permission) : null),
    h("span", { class: "tool-desc" }, t.description || "")))));
  }

  function drawDetail() {
    if (active) active.close();
    active = null;
    layout.classList.toggle("has-detail", Boolean(current));
    if (!current) {
      clear(detail, empty("Choose a tool", "Pick a tool on the left to read its schema and try it."));
      return;
    }
    const t = (state.tools || []).find((x) => x.name === current);
    if (!t) {
      clear(detail, empty(`No tool “${current}”`, "It may have been removed, or your key does not reach it."));
      return;
    }
    active = toolPage(detail, t);
  }

  async function load(force) {
    clear(listEl, h("li", { class: "muted" }, "Loading tools…"));
    try {
      await loadTools(force);
      drawFilters();
      drawList();
      drawDetail();
    } catch (e) {
      clear(listEl, h("li", null, errorBox(e, () => load(true))));
      clear(detail);
    }
  }
  load(false);

  const off = onEvent((e) => {
    if (/^tool_(added|updated|removed|loaded)$|^reload_completed$/.test(e.type)) {
      reload();
    }
  });
  const reload = debounce(async () => {
    try {
      await loadTools(true);
      drawFilters();
      drawList();
    } catch { /* the next event tries again */ }
  }, 500);

  return {
    update(n) {
      current = n;
      drawList();
      drawDetail();
      // A keyboard user who picked a tool lands on it.
      if (!detail.contains(document.activeElement)) detail.querySelector("h2")?.focus({ preventScroll: true });
    },
    close() {
      off();
      if (active) active.close();
    },
  };
}

function annotations(a) {
  if (!a) return [];
  const out = [];
  if (a.read_only || a.readOnlyHint) out.push("read-only");
  if (a.destructive || a.destructiveHint) out.push("destructive");
  if (a.idempotent || a.idempotentHint) out.push("idempotent");
  if (a.open_world || a.openWorldHint) out.push("open world");
  return out;
}

// limitText says what the limiter would do with a call now.
function limitText(l) {
  const bucket = l.bucket || "(none)";
  const what = { run: "would run now", queue: "would wait in the queue", reject: "would be rejected now (no room, queue full or off)",
    bypass: "a workflow node's call: not limited", unknown: "cannot tell without taking a slot (a shared limiter)" }[l.outcome] || l.outcome;
  if (l.outcome === "bypass") return `bucket ${bucket}: ${what}`;
  let s = `bucket ${bucket}: ${what}; ${l.in_flight} of ${l.limit} in flight`;
  if (l.bucket_limit) s += `, ${l.bucket_in_flight || 0} of ${l.bucket_limit} in the bucket`;
  if (l.queue_size) s += `, ${l.queued} of ${l.queue_size} queued`;
  return s;
}

// toolPage draws one tool: its description, its form and its results.
function toolPage(el, t) {
  let initial;
  const pre = sessionStorage.getItem(PREFILL);
  if (pre) {
    try {
      const p = JSON.parse(pre);
      if (p.tool === t.name) initial = p.arguments;
    } catch { /* ignore */ }
    sessionStorage.removeItem(PREFILL);
  }
  const form = new SchemaForm(t.input_schema, initial);
  const raw = h("textarea", { class: "mono raw", rows: 10, spellcheck: "false", "aria-label": "Arguments as JSON" });
  const rawErr = h("p", { class: "field-error", hidden: true });
  const rawPane = h("div", { class: "raw-pane", hidden: true }, raw, rawErr);
  let mode = "form";
  const tabForm = h("button", { type: "button", role: "tab", "aria-selected": "true", onclick: () => setMode("form") }, "Form");
  const tabRaw = h("button", { type: "button", role: "tab", "aria-selected": "false", onclick: () => setMode("json") }, "JSON");

  function setMode(m) {
    if (m === mode) return;
    if (m === "json") {
      const { args } = form.values();
      raw.value = JSON.stringify(args, null, 2);
    } else {
      try {
        const v = raw.value.trim() ? JSON.parse(raw.value) : {};
        form.fill(v);
        rawErr.hidden = true;
      } catch (e) {
        rawErr.textContent = `Not valid JSON: ${e.message}`;
        rawErr.hidden = false;
        return;
      }
    }
    mode = m;
    tabForm.setAttribute("aria-selected", String(m === "form"));
    tabRaw.setAttribute("aria-selected", String(m === "json"));
    form.el.hidden = m !== "form";
    rawPane.hidden = m !== "json";
  }

  const conv = h("input", { type: "text", id: "opt-conv", autocomplete: "off", spellcheck: "false", placeholder: "e.g. console" });
  const callerId = h("input", { type: "text", id: "opt-caller", autocomplete: "off", spellcheck: "false", placeholder: "console" });
  const timeout = h("input", { type: "number", id: "opt-timeout", min: "1", step: "1", inputmode: "numeric", placeholder: t.timeout_ms ? String(t.timeout_ms) : "tool default" });
  const options = h("details", { class: "options" }, h("summary", null, "Call options"),
    h("div", { class: "grid3" },
      h("div", { class: "field" }, h("label", { for: "opt-conv", class: "field-label" }, "Conversation ID"), conv),
      h("div", { class: "field" }, h("label", { for: "opt-caller", class: "field-label" }, "Caller ID"), callerId),
      h("div", { class: "field" }, h("label", { for: "opt-timeout", class: "field-label" }, "Timeout (ms)"), timeout)));

  const runBtn = h("button", { type: "submit", class: "primary", id: "try-it" }, "Try it");
  // A dry run goes through validation, permission, approval and the
  // limiter without running the tool: nothing is recorded or asked for.
  const dryBtn = h("button", { type: "button", id: "dry-run", title: "What the call would do now, without running it or recording it", onclick: () => run(true) }, "Dry run");
  const cancelBtn = h("button", { type: "button", class: "ghost", hidden: true, onclick: () => ctl && ctl.abort() }, "Cancel");
  const resetBtn = h("button", { type: "button", class: "ghost", onclick: () => { form.fill(undefined); form.clearErrors(); raw.value = "{}"; clear(result); } }, "Reset");
  const result = h("div", { class: "result", id: "result", "aria-live": "polite" });
  // A key without the call right reads the form but cannot run it: the
  // button is off, and says why, rather than failing with a 403.
  const offNote = h("p", { class: "muted small try-off", id: "try-off", hidden: true });
  let callOff = false;
  let ctl = null;

  // The tool's own examples (a tool file's examples:) fill the form, the
  // calls its author shows models.
  const examples = (t.examples || []).length ? h("p", { class: "examples small", id: "tool-examples" }, h("span", { class: "muted" }, "Examples: "),
    t.examples.map((ex, i) => h("button", { type: "button", class: "ghost small", title: JSON.stringify(ex), "data-example": String(i),
      onclick: () => { form.fill(ex); form.clearErrors(); raw.value = pretty(ex); } }, `Example ${i + 1}`))) : null;
  const formEl = h("form", { class: "try card", novalidate: true, "aria-label": `Try ${t.name}`, onsubmit: (ev) => { ev.preventDefault(); run(); } },
    h("div", { class: "card-head" }, h("h3", null, "Try it"),
      h("div", { class: "tabs", role: "tablist", "aria-label": "Arguments editor" }, tabForm, tabRaw)),
    examples, form.el, rawPane, options,
    h("div", { class: "actions" }, runBtn, dryBtn, cancelBtn, resetBtn, h("span", { class: "muted small kbd-hint" }, "Ctrl+Enter runs")),
    offNote, result);
  who().then((w) => {
    if (can(w, "call")) return;
    callOff = true;
    runBtn.disabled = true;
    dryBtn.disabled = true;
    runBtn.setAttribute("aria-describedby", "try-off");
    runBtn.title = "This key may not call tools";
    offNote.textContent = lacks(w, "call", "call tools");
    offNote.hidden = false;
  });
  formEl.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      run();
    }
  });

  async function run(dry) {
    if (ctl || callOff) return;
    form.clearErrors();
    rawErr.hidden = true;
    let args;
    if (mode === "json") {
      try {
        args = raw.value.trim() ? JSON.parse(raw.value) : {};
      } catch (e) {
        rawErr.textContent = `Not valid JSON: ${e.message}`;
        rawErr.hidden = false;
        raw.focus();
        return;
      }
    } else {
      const v = form.values();
      if (v.errors.length) {
        clear(result, h("p", { class: "field-error" }, "Fix the fields marked above first."));
        return;
      }
      args = v.args;
    }
    const body = { arguments: args, caller: { type: "direct", id: callerId.value.trim() || "console" } };
    if (conv.value.trim()) body.caller.conversation_id = conv.value.trim();
    if (timeout.value) body.timeout_ms = Number(timeout.value);
    ctl = new AbortController();
    runBtn.disabled = true;
    dryBtn.disabled = true;
    if (dry) {
      try {
        const d = await api(`/v1/tools/${encodeURIComponent(t.name)}/call?dry_run=true`, { method: "POST", body, signal: ctl.signal });
        showDry(d);
      } catch (e) {
        clear(result, errorBox(e));
      } finally {
        ctl = null;
        runBtn.disabled = callOff;
        dryBtn.disabled = callOff;
      }
      return;
    }
    runBtn.textContent = "Running…";
    cancelBtn.hidden = false;
    const started = performance.now();
    clear(result, h("p", { class: "muted running" }, h("span", { class: "spinner", "aria-hidden": "true" }),
      t.permission === "confirm" ? ["Waiting for a person to approve this call — ", h("a", { href: "#/approvals" }, "open the approval inbox"), "."] : "Running…"));
    try {
      const r = await api(`/v1/tools/${encodeURIComponent(t.name)}/call`, { method: "POST", body, signal: ctl.signal });
      showResult(r, performance.now() - started);
    } catch (e) {
      if (e.name === "AbortError") clear(result, h("p", { class: "muted" }, "Canceled: the call was abandoned."));
      else clear(result, errorBox(e));
    } finally {
      ctl = null;
      runBtn.disabled = callOff;
      dryBtn.disabled = callOff;
      runBtn.textContent = "Try it";
      cancelBtn.hidden = true;
    }
  }

  function showResult(r, roundTrip) {
    const rest = mode === "form" ? form.showErrors(r.validation_errors) : r.validation_errors || [];
    const parts = [
      h("div", { class: "result-head" }, statusPill(r.ok, r.error_type),
        h("span", { class: "muted" }, `${fmtMS(r.duration_ms)} in the engine · ${fmtMS(roundTrip)} round trip · ${r.attempts} attempt${r.attempts === 1 ? "" : "s"}`),
        r.call_id ? h("a", { href: `#/calls/${encodeURIComponent(r.call_id)}`, class: "small" }, "Open the record →") : null),
    ];
    if (!r.ok) {
      parts.push(h("p", { class: "result-error", role: "alert" }, r.error || "The call failed."));
      if (rest.length) parts.push(h("ul", { class: "verrs" }, rest.map((v) => h("li", null, v.path ? h("code", null, v.path) : null, v.path ? ": " : "", v.message))));
      else if (r.validation_errors && r.validation_errors.length) parts.push(h("p", { class: "muted small" }, "The problems are shown next to their fields."));
    }
    if (r.output !== undefined) parts.push(h("h4", null, "Output"), codeBlock(r.output, "Output"));
    if (r.metadata && Object.keys(r.metadata).length) parts.push(h("h4", null, "Metadata"), codeBlock(r.metadata, "Metadata"));
    clear(result, h("div", { class: `result-box ${r.ok ? "is-ok" : "is-err"}`, "data-ok": String(r.ok) }, parts));
  }

  // showDry draws a dry run's report: what the call would do, and why not.
  function showDry(d) {
    const rest = mode === "form" ? form.showErrors(d.validation_errors) : d.validation_errors || [];
    const needsApproval = d.approval && d.approval.required;
    let verdict = `Would not run: stopped at ${d.stage}`;
    if (d.replay_of) verdict = `Would not run: answered from ${d.replay_of} (same idempotency key)`;
    else if (d.would_run) verdict = needsApproval ? "Would run once a person approves it" : "Would run now";
    const facts = [];
    const fact = (k, v) => facts.push(h("dt", null, k), h("dd", null, v));
    if (d.policy) fact("Policy", (d.policy.would_deny ? "would deny (monitor mode: it runs)" : d.policy.allow ? "allow" : "deny") +
      (d.policy.policies && d.policy.policies.length ? `, by ${d.policy.policies.join(", ")}` : d.policy.allow ? "" : ": no policy permits it"));
    if (d.permission) fact("Permission", d.permission);
    if (needsApproval) fact("Approval", d.approval.deciders ? `needed, from ${d.approval.deciders}` : "needed, and no approver is configured");
    if (d.limit) fact("Limiter", limitText(d.limit));
    if (d.timeout_ms) fact("Timeout", `${fmtMS(d.timeout_ms)} (${d.timeout_from})`);
    if (d.retry) fact("Retries", d.retry.max_attempts > 1 ? `up to ${d.retry.max_attempts} attempts: ${d.retry.why}` : `none: ${d.retry.why}`);
    const parts = [
      h("div", { class: "result-head" }, h("span", { class: "pill" }, "dry run"),
        d.would_run || d.replay_of ? null : statusPill(false, d.error_type),
        h("strong", { class: "dry-verdict" }, verdict),
        h("span", { class: "muted small" }, "Nothing ran, nothing was recorded, no approval was asked for.")),
    ];
    if (d.error) {
      parts.push(h("p", { class: "result-error", role: "alert" }, d.error));
      if (rest.length) parts.push(h("ul", { class: "verrs" }, rest.map((v) => h("li", null, v.path ? h("code", null, v.path) : null, v.path ? ": " : "", v.message))));
    }
    if (facts.length) parts.push(h("dl", { class: "facts" }, facts));
    if (d.arguments !== undefined) parts.push(h("h4", null, "Arguments as the tool would get them"), codeBlock(d.arguments, "Arguments"));
    clear(result, h("div", { class: `result-box dry ${d.would_run || d.replay_of ? "is-ok" : "is-err"}`, "data-would-run": String(!!d.would_run) }, parts));
  }

  const chips = annotations(t.annotations).map((a) => h("span", { class: `chip static ${a === "destructive" ? "warn" : ""}` }, a));
  clear(el,
    h("a", { href: "#/tools", class: "back small" }, "← All tools"),
    h("header", { class: "tool-head" },
      h("h2", { tabindex: "-1" }, t.name),
      t.version ? h("span", { class: "muted" }, `v${t.version}`) : null,
      h("span", { class: `perm perm-${t.permission}`, title: "permission" }, t.permission),
      t.status && t.status !== "active" ? h("span", { class: "chip static warn" }, t.status) : null),
    h("p", { class: "lead" }, t.description || "No description."),
    h("dl", { class: "facts" },
      t.category ? [h("dt", null, "Category"), h("dd", null, t.category)] : null,
      t.tags && t.tags.length ? [h("dt", null, "Tags"), h("dd", null, t.tags.join(", "))] : null,
      chips.length ? [h("dt", null, "Behaviour"), h("dd", null, chips)] : null,
      t.timeout_ms ? [h("dt", null, "Timeout"), h("dd", null, fmtMS(t.timeout_ms))] : null,
      t.allowed_callers ? [h("dt", null, "Callers"), h("dd", { id: "tool-callers", title: "who may call the tool: the model directly, a program it wrote" }, t.allowed_callers.join(", "))] : null,
      t.source ? [h("dt", null, "Source"), h("dd", null, t.source)] : null,
      [h("dt", null, "History"), h("dd", null, h("a", { href: `#/calls?tool=${encodeURIComponent(t.name)}` }, "Calls of this tool"))]),
    formEl,
    h("details", { class: "schema" }, h("summary", null, "Input schema"), codeBlock(t.input_schema, "Input schema")),
    t.output_schema ? h("details", { class: "schema" }, h("summary", null, "Output schema"), codeBlock(t.output_schema, "Output schema")) : null);
  raw.value = pretty(initial || {});
  return { close() { if (ctl) ctl.abort(); } };
}

export { ApiError };
