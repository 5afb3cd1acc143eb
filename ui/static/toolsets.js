// Toolsets and agents: the named groups of tools (each with its own MCP
// endpoint, /mcp/NAME) and the agents' toolkits, with what each can call.

import { api } from "./api.js";
import { h, clear, empty, errorBox } from "./dom.js";
import { onEvent } from "./events.js";
import { debounce } from "./dom.js";

// page renders #/toolsets.
export function page(main) {
  const setsEl = h("div", { class: "groups" }, h("p", { class: "muted" }, "Loading toolsets…"));
  const agentsEl = h("div", { class: "groups" });
  const restEl = h("div");
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Toolsets and agents"),
      h("p", { class: "muted" }, "Which tools each toolset serves (on its own MCP endpoint) and each agent can call. A key scoped to toolsets sees its own only.")),
    h("section", { "aria-labelledby": "ts-h" }, h("h2", { id: "ts-h", class: "section-title" }, "Toolsets"), setsEl),
    h("section", { "aria-labelledby": "ag-h" }, h("h2", { id: "ag-h", class: "section-title" }, "Agents"), agentsEl),
    restEl);

  async function load() {
    try {
      const [ts, ag, tl] = await Promise.all([api("/v1/toolsets"), api("/v1/agents"), api("/v1/tools")]);
      const tools = new Map((tl.tools || []).map((t) => [t.name, t]));
      const sets = (ts.toolsets || []).sort((a, b) => a.name.localeCompare(b.name));
      const agents = (ag.agents || []).sort((a, b) => a.name.localeCompare(b.name));
      clear(setsEl, sets.length ? sets.map((s) => group("toolset", s.name, s.description, s.tools || [], tools,
        h("span", { class: "muted small" }, "MCP endpoint ", h("code", null, `/mcp/${s.name}`))))
        : empty("No toolset", "Toolsets are named groups of tools, defined in toolset files (see docs/toolsets-and-agents.md)."));
      clear(agentsEl, agents.length ? agents.map((a) => group("agent", a.name, "", a.tools || [], tools, null))
        : empty("No agent", "An agent sees only the tools of its toolkit; agents are defined beside the toolsets."));
      const grouped = new Set(sets.flatMap((s) => s.tools || []));
      const loose = [...tools.keys()].filter((n) => !grouped.has(n)).sort();
      clear(restEl, sets.length && loose.length
        ? h("section", { class: "card", "aria-labelledby": "loose-h" }, h("h2", { id: "loose-h" }, `In no toolset (${loose.length})`),
          h("p", { class: "muted small" }, "Served on /mcp and the REST API only."), toolLinks(loose, tools))
        : null);
    } catch (e) {
      clear(setsEl, errorBox(e, load));
    }
  }

  load();
  const reload = debounce(load, 500);
  const off = onEvent((e) => {
    if (/^tool_(added|updated|removed|loaded)$|^reload_completed$/.test(e.type)) reload();
  });
  return { close() { off(); } };
}

// group is one toolset or agent: its name, what it is, and its tools.
function group(kind, name, description, names, tools, extra) {
  const missing = names.filter((n) => !tools.has(n)).length;
  return h("article", { class: `card group ${kind}`, "data-name": name, "aria-labelledby": `${kind}-${name}` },
    h("header", { class: "group-head" },
      h("h3", { id: `${kind}-${name}` }, name),
      h("span", { class: "pill run" }, `${names.length} tool${names.length === 1 ? "" : "s"}`),
      extra),
    description ? h("p", { class: "muted" }, description) : null,
    names.length ? toolLinks(names, tools) : h("p", { class: "muted small" }, "No tool."),
    missing ? h("p", { class: "muted small" }, `${missing} not listed here: outside this key's reach, or removed.`) : null);
}

// toolLinks lists tools as links to their pages, with their permission
// when it is not auto.
function toolLinks(names, tools) {
  return h("ul", { class: "tool-chips" }, [...names].sort().map((n) => {
    const t = tools.get(n);
    return h("li", null, h("a", { href: `#/tools/${encodeURIComponent(n)}`, class: "chip static", title: t ? t.description || n : n }, n,
      t && t.permission && t.permission !== "auto" ? h("span", { class: `perm perm-${t.permission}` }, t.permission) : null));
  }));
}
