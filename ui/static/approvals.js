// Approvals: the calls waiting for a person, with Approve and Deny, kept
// current by the event stream (permission_requested, permission_decided),
// and the latest decisions.

import { api } from "./api.js";
import { h, clear, codeBlock, empty, errorBox, timeEl, fmtRelative, toast, visible } from "./dom.js";
import { onEvent } from "./events.js";
import { who, can, lacks } from "./who.js";

// WAITS says what a decision does, by who waits for it (the API's
// caller_waits): a person deciding should know whether someone is on the
// other end.
const WAITS = {
  here: ["run", "caller waiting", "The caller waits on this server and gets the result as soon as you decide."],
  none: ["wait", "caller left", "The caller is gone: once decided, the server runs the call (or records the refusal) for the record."],
  elsewhere: ["static", "asked elsewhere", "The call was asked of another process sharing the store (another server, a command line); its caller may wait there."],
};

// askedBy lists who asked, as far as the approval tells: the caller as the
// client named it, the user, and the API key the server authenticated.
export function askedBy(a) {
  const c = a.caller || {};
  const out = [];
  if (c.id) out.push(["Caller", [c.id, c.type ? h("span", { class: "muted" }, ` (${c.type})`) : null]]);
  else if (c.type) out.push(["Caller", h("span", { class: "muted" }, c.type)]);
  if (c.user_id) out.push(["User", c.user_id]);
  if (c.workflow_id) out.push(["Workflow", c.workflow_id]);
  if (a.requested_by) out.push(["API key", [h("code", { class: "small" }, a.requested_by), a.requested_by_name ? ` (${a.requested_by_name})` : null]]);
  if (!out.length) out.push(["Caller", h("span", { class: "muted" }, "not named: the call came without a caller or a key")]);
  return out;
}

// pendingCount keeps the header's badge current on every page.
const countListeners = new Set();
let lastCount = 0;

export function onPendingCount(f) {
  countListeners.add(f);
  f(lastCount);
}

function setCount(n) {
  lastCount = n;
  countListeners.forEach((f) => f(n));
}

export async function refreshCount() {
  try {
    const r = await api("/v1/approvals");
    setCount((r.approvals || []).length);
    return r.approvals || [];
  } catch {
    return null;
  }
}

// approvalOf is the approval ID a permission event names: its approval_id
// field, or the message ("approval ID") of a server from before the field.
export function approvalOf(e) {
  if (typeof e.approval_id === "string" && e.approval_id) return e.approval_id;
  const m = /^approval (\S+)$/.exec(e.message || "");
  return m ? m[1] : "";
}

// untilSeen runs load (which resolves to the pending approvals, or null)
// again, with growing pauses, until the approval id is among them: the
// engine announces a request just before its inbox stores it.
export async function untilSeen(id, load) {
  for (const pause of [0, 150, 300, 600, 1200, 2400]) {
    if (pause) await new Promise((r) => setTimeout(r, pause));
    const list = await load();
    if (!id || !list || list.some((a) => a.id === id)) return;
  }
}

onEvent((e) => {
  if (e.type === "permission_requested") untilSeen(approvalOf(e), refreshCount);
  else if (e.type === "permission_decided") refreshCount();
});

// page renders #/approvals.
export function page(main) {
  const pendingEl = h("div", { class: "approvals" }, h("p", { class: "muted" }, "Loading…"));
  const decidedEl = h("div");
  const status = h("p", { class: "sr-only", role: "status", "aria-live": "polite" });
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Approval inbox"),
      h("p", { class: "muted" }, "Calls of tools whose permission is ", h("code", null, "confirm"), " wait here for a person. A decision is bound to the arguments shown.")),
    status,
    h("section", { "aria-labelledby": "pend-h" }, h("h2", { id: "pend-h", class: "section-title" }, "Pending"), pendingEl),
    h("section", { class: "card", "aria-labelledby": "dec-h" }, h("h2", { id: "dec-h" }, "Recent decisions"), decidedEl));

  const busy = new Set(); // approvals being decided here
  let tick = null;
  let mayDecide = true;
  let whoAns = null;

  async function load() {
    try {
      const [pend, all] = await Promise.all([api("/v1/approvals"), api("/v1/approvals?status=all")]);
      const list = (pend.approvals || []).sort((a, b) => a.created_at.localeCompare(b.created_at));
      setCount(list.length);
      drawPending(list);
      drawDecided((all.approvals || []).filter((a) => a.status !== "pending"));
      return list;
    } catch (e) {
      clear(pendingEl, errorBox(e, load));
      return null;
    }
  }

  function drawPending(list) {
    if (!list.length) {
      clear(pendingEl, empty("Nothing waits for you", "When an agent calls a tool that needs confirmation, it appears here at once."));
      return;
    }
    // A redraw keeps what was typed and where the focus was.
    const typed = new Map([...pendingEl.querySelectorAll("input[data-reason]")].map((i) => [i.dataset.reason, i.value]));
    const focused = document.activeElement && pendingEl.contains(document.activeElement) ? document.activeElement.id : "";
    clear(pendingEl, list.map((a) => {
      const reason = h("input", { type: "text", id: `reason-${a.id}`, placeholder: "optional", autocomplete: "off", "data-reason": a.id, value: typed.get(a.id) || "" });
      // The key that asked for a call does not decide it, unless the
      // server allows self-approval.
      const own = whoAns && whoAns.key && !whoAns.self_approval && a.requested_by === `key:${whoAns.key.id}`;
      const off = mayDecide && !own ? null : `off-${a.id}`;
      const approveBtn = h("button", { type: "button", class: "primary approve", disabled: Boolean(off), "aria-describedby": off, onclick: () => decide(a, true, reason.value) }, "Approve");
      const denyBtn = h("button", { type: "button", class: "danger deny", disabled: Boolean(off), "aria-describedby": off, onclick: () => decide(a, false, reason.value) }, "Deny");
      const expires = h("span", { class: "expires", "data-expires": a.expires_at }, fmtRelative(a.expires_at));
      const caller = a.caller || {};
      const waits = WAITS[a.caller_waits];
      return h("article", { class: "card approval", "data-id": a.id, "aria-labelledby": `ap-${a.id}` },
        h("header", { class: "approval-head" },
          h("h3", { id: `ap-${a.id}` }, h("a", { href: `#/tools/${encodeURIComponent(a.tool)}` }, a.tool)),
          h("span", { class: "pill wait" }, "pending"),
          waits ? h("span", { class: `pill ${waits[0]} waits`, "data-waits": a.caller_waits, title: waits[2] }, waits[1]) : null,
          h("span", { class: "muted small" }, "asked ", timeEl(a.created_at), " · expires ", expires)),
        h("dl", { class: "facts" },
          askedBy(a).map(([k, v]) => [h("dt", null, k), h("dd", { class: `asked-${k.toLowerCase().replace(" ", "-")}` }, v)]),
          caller.conversation_id ? [h("dt", null, "Conversation"), h("dd", null, caller.conversation_id)] : null,
          h("dt", null, "Call"), h("dd", null, h("code", { class: "small" }, a.call_id))),
        waits ? h("p", { class: "muted small waits-note" }, waits[2]) : null,
        h("h4", null, "Arguments"), codeBlock(a.arguments, `Arguments of ${a.tool}`),
        h("div", { class: "actions decide" },
          h("label", { for: `reason-${a.id}`, class: "field-label inline" }, "Reason"), reason, approveBtn, denyBtn),
        off ? h("p", { class: "muted small decide-off", id: off }, !mayDecide ? lacks(whoAns, "approve", "decide approvals")
          : "This key asked for this call: another key with the “approve” right decides it (or set server.self_approval: true for a single-user setup).") : null);
    }));
    if (focused) document.getElementById(focused)?.focus();
  }

  function drawDecided(list) {
    list.sort((a, b) => (b.decided_at || b.expires_at || "").localeCompare(a.decided_at || a.expires_at || ""));
    list = list.slice(0, 20);
    if (!list.length) {
      clear(decidedEl, empty("No decision yet"));
      return;
    }
    clear(decidedEl, h("div", { class: "table-wrap" }, h("table", { class: "table" },
      h("thead", null, h("tr", null, ["Decided", "Tool", "Outcome", "By", "Reason", "Call"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, list.map((a) => h("tr", null,
        h("td", null, timeEl(a.decided_at || a.expires_at)),
        h("td", null, h("a", { href: `#/tools/${encodeURIComponent(a.tool)}` }, a.tool)),
        h("td", null, h("span", { class: `pill ${a.status === "approved" ? "ok" : a.status === "denied" ? "err" : "wait"}` }, a.status)),
        // by is the decider as the server knows them; note is the
        // deciding client's own text, shown apart and as such.
        h("td", null, (a.decision && a.decision.by) || "—",
          a.decision && a.decision.note ? h("span", { class: "muted" }, ` — ${a.decision.note}`) : null),
        h("td", null, (a.decision && a.decision.reason) || "—"),
        h("td", null, h("a", { href: `#/calls/${encodeURIComponent(a.call_id)}`, class: "mono small", "aria-label": `Call ${a.call_id}` }, `…${a.call_id.slice(-8)}`))))))));
  }

  async function decide(a, approved, reason) {
    if (busy.has(a.id)) return;
    busy.add(a.id);
    const art = pendingEl.querySelector(`[data-id="${CSS.escape(a.id)}"]`);
    art?.querySelectorAll("button").forEach((b) => (b.disabled = true));
    try {
      await api(`/v1/approvals/${encodeURIComponent(a.id)}/${approved ? "approve" : "deny"}`, {
        method: "POST", body: { digest: a.digest, ...(reason ? { reason } : {}) },
      });
      status.textContent = visible(`${approved ? "Approved" : "Denied"} the call of ${a.tool}.`);
      toast(`${approved ? "Approved" : "Denied"}: ${a.tool}`, approved ? "ok" : "info");
    } catch (e) {
      toast(e.code === "already_decided" ? "Someone decided first, or it expired." : `Could not decide: ${e.message}`, "error");
    } finally {
      busy.delete(a.id);
      load();
    }
  }

  who().then((w) => {
    whoAns = w;
    mayDecide = can(w, "approve");
    load(); // again, with what the key may decide
  });
  load();
  const off = onEvent((e) => {
    if (e.type === "permission_requested") untilSeen(approvalOf(e), load);
    else if (e.type === "permission_decided") load();
  });
  // Approvals expire without an event: look again now and then.
  const poll = setInterval(() => { if (!busy.size) load(); }, 20000);
  tick = setInterval(() => {
    const now = Date.now();
    pendingEl.querySelectorAll(".expires").forEach((el) => {
      el.textContent = fmtRelative(el.dataset.expires, now);
      if (new Date(el.dataset.expires).getTime() < now) el.classList.add("late");
    });
  }, 1000);
  return { close() { off(); clearInterval(tick); clearInterval(poll); } };
}
