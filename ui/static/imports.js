// MCP imports: the MCP servers wield imports tools from, with their
// connection state, and the tools held because their server changed their
// definition since it was pinned: each with its diff and an Accept button
// (the key needs the pins right). Kept current by the event stream
// (tool_held, tool_updated, tool_added, tool_removed) and a slow poll for
// connection states, which have no event.

import { api } from "./api.js";
import { h, clear, empty, errorBox, timeEl, toast, visible } from "./dom.js";
import { onEvent } from "./events.js";

const STATE_PILL = { connected: "ok", connecting: "wait", failed: "err", disabled: "", closed: "" };

// diffView draws a unified diff, one line an element, coloured by its
// first character; the text is set as text (the server made it safe, and
// h makes any control character visible again).
function diffView(diff, label) {
  const lines = (diff || "").replace(/\n$/, "").split("\n");
  return h("pre", { class: "code diff", tabindex: "0", "aria-label": label },
    lines.map((l) => {
      const c = l.startsWith("+++") || l.startsWith("---") ? "diff-file"
        : l.startsWith("@@") ? "diff-hunk"
        : l.startsWith("+") ? "diff-add"
        : l.startsWith("-") ? "diff-del" : "";
      return h("span", { class: c }, l + "\n");
    }));
}

// page renders #/imports.
export function page(main) {
  const serversEl = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const heldEl = h("div", { class: "held-list" });
  const status = h("p", { class: "sr-only", role: "status", "aria-live": "polite" });
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "MCP imports"),
      h("p", { class: "muted" }, "The MCP servers wield imports tools from. A tool whose definition changed since it was pinned is held: not listed, not callable, until it is accepted here or with ",
        h("code", null, "wield pins accept NAME"), ".")),
    status,
    h("section", { class: "card", "aria-labelledby": "srv-h" }, h("h2", { id: "srv-h" }, "Servers"), serversEl),
    h("section", { "aria-labelledby": "held-h" }, h("h2", { id: "held-h", class: "section-title" }, "Held tools"), heldEl));

  const busy = new Set();

  async function load() {
    try {
      const [imp, pins] = await Promise.all([api("/v1/imports"), api("/v1/pins")]);
      drawServers(imp.servers || []);
      drawHeld(pins.held || [], pins.can_accept);
    } catch (e) {
      clear(serversEl, errorBox(e, load));
      clear(heldEl);
    }
  }

  function drawServers(list) {
    if (!list.length) {
      clear(serversEl, empty("No MCP server is imported", "Add servers under mcp_servers in wield.yaml (docs/mcp.md)."));
      return;
    }
    clear(serversEl, h("div", { class: "table-wrap" }, h("table", { class: "table imports" },
      h("thead", null, h("tr", null, ["Server", "State", "Transport", "Tools", "Held", "Since", "Last error"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, list.map((s) => h("tr", { "data-server": s.name },
        h("td", { class: "mono" }, s.name),
        h("td", null, h("span", { class: `pill ${STATE_PILL[s.state] || ""}`, "data-state": s.state }, s.state)),
        h("td", null, s.transport),
        h("td", null, String(s.tools)),
        h("td", null, s.held_count ? h("span", { class: "pill wait" }, String(s.held_count)) : "0"),
        h("td", null, s.since ? timeEl(s.since) : "—"),
        h("td", { class: "small" }, s.last_error || "—")))))));
  }

  function drawHeld(list, canAccept) {
    if (!list.length) {
      clear(heldEl, empty("No tool is held", "Every imported tool is as it was pinned."));
      return;
    }
    const reason = "This key lacks the pins right: accept with a key made with --rights pins, or with wield pins accept.";
    clear(heldEl, list.map((t) => {
      const id = `held-${t.name}`;
      const accept = h("button", {
        type: "button", class: "primary accept", disabled: !canAccept,
        title: canAccept ? `Pin the current definition of ${t.name} and make it callable` : reason,
        "aria-describedby": canAccept ? null : `${id}-why`,
        onclick: () => acceptTool(t),
      }, "Accept");
      return h("article", { class: "card held", "data-name": t.name, "aria-labelledby": id },
        h("header", { class: "card-head" },
          h("h3", { id, class: "mono" }, t.name),
          h("span", { class: "pill wait" }, "held")),
        h("dl", { class: "facts" },
          h("dt", null, "Server"), h("dd", null, t.server),
          h("dt", null, "Remote tool"), h("dd", { class: "mono" }, t.tool),
          h("dt", null, "Changed"), h("dd", null, (t.changed || []).map((c) => h("span", { class: "chip static warn" }, c.replace(/_/g, " ")))),
          h("dt", null, "Pinned"), h("dd", null, t.pinned_at ? timeEl(t.pinned_at) : "—"),
          h("dt", null, "Held since"), h("dd", null, t.held_since ? timeEl(t.held_since) : "—")),
        h("h4", null, "What changed (pinned → now)"),
        diffView(t.diff, `Diff of ${t.name}`),
        h("div", { class: "actions" }, accept,
          canAccept ? null : h("span", { id: `${id}-why`, class: "muted small" }, reason)));
    }));
  }

  async function acceptTool(t) {
    if (busy.has(t.name)) return;
    busy.add(t.name);
    heldEl.querySelector(`[data-name="${CSS.escape(t.name)}"] button.accept`)?.setAttribute("disabled", "");
    try {
      // Bound to the definition shown: a tool changed again is refused.
      await api(`/v1/pins/${encodeURIComponent(t.name)}/accept`, { method: "POST", body: { hash: t.hash } });
      status.textContent = visible(`Accepted ${t.name}: it is callable now.`);
      toast(`Accepted: ${t.name}`, "ok");
    } catch (e) {
      toast(e.status === 409 ? `${t.name} changed again: look at the new diff.` : `Could not accept: ${e.message}`, "error");
    } finally {
      busy.delete(t.name);
      load();
    }
  }

  load();
  const off = onEvent((e) => {
    if (e.type === "tool_held" || ((e.source || "").startsWith("mcp:") &&
      (e.type === "tool_updated" || e.type === "tool_added" || e.type === "tool_removed"))) load();
  });
  // Connection states change without an event: look again now and then.
  const poll = setInterval(() => { if (!busy.size) load(); }, 10000);
  return { close() { off(); clearInterval(poll); } };
}
