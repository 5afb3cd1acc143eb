// API keys: the keys of the server (never their secrets), making one (its
// secret shown once), revoking one. The endpoints need the keys right; a
// server without keys lists its keys file and says how to start using
// keys, since it would go on answering without them until restarted.

import { api, apiKey } from "./api.js";
import { h, clear, empty, errorBox, timeEl, toast, codeBlock } from "./dom.js";
import { who, can, lacks } from "./who.js";

// RIGHTS says what each right lets a key do, as `wield keys create` does.
const RIGHTS = [
  ["call", "call tools (REST and MCP) and write artifacts"],
  ["approve", "approve or deny the calls of confirm tools (not those it asked for)"],
  ["metrics", "read /metrics, whose series cover every tool (not with toolsets)"],
  ["workflow", "claim caller.type workflow_node, which bypasses the concurrency limits"],
  ["keys", "manage keys, as here (not with toolsets)"],
  ["pins", "accept the changed definition of a held MCP tool (MCP imports)"],
];

// page renders #/keys.
export function page(main) {
  const listEl = h("div", { class: "table-wrap" }, h("p", { class: "muted" }, "Loading keys…"));
  const formBox = h("div");
  const secretBox = h("div", { "aria-live": "polite" });
  const note = h("div");
  clear(main,
    h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "API keys"),
      h("p", { class: "muted" }, "Every key reads; each other right is granted on its own. The server keeps only a hash of each key: a new key is shown once.")),
    note, secretBox, formBox,
    h("section", { class: "card", "aria-labelledby": "keys-h" }, h("h2", { id: "keys-h" }, "Keys"), listEl));

  let me = null;
  let toolsets = [];

  async function load() {
    try {
      me = await who();
      const [list, ts] = await Promise.all([api("/v1/keys"), api("/v1/toolsets").catch(() => ({ toolsets: [] }))]);
      toolsets = (ts.toolsets || []).map((t) => t.name).sort();
      drawNote(list);
      drawList(list);
      drawForm(list);
    } catch (e) {
      if (e.status === 403) {
        clear(note, h("div", { class: "card notice" }, h("p", null, lacks(me, "keys", "manage keys")),
          h("p", { class: "muted small" }, "The keys right is an administrator's; give it with: ", h("code", null, "wield keys create --name admin --rights call,approve,metrics,keys"))));
        clear(listEl, empty("The keys are not shown to this key"));
        clear(formBox);
      } else {
        clear(listEl, errorBox(e, load));
      }
    }
  }

  function drawNote(list) {
    clear(note, list.required ? null : h("div", { class: "card notice keyless" },
      h("p", null, h("strong", null, "This server runs without API keys: "), "everyone on this machine may use it, and it listens on loopback only. Keys are not made here, since the running server would go on answering without them."),
      h("p", { class: "muted small" }, "To require keys, make the first one and restart ", h("code", null, "wield serve"), ":"),
      codeBlock("wield keys create --name admin --rights call,approve,metrics,keys", "Command")));
  }

  function drawList(list) {
    const keys = list.keys || [];
    if (!keys.length) {
      clear(listEl, empty("No key yet", list.required ? "Make one above." : "Make one with wield keys create."));
      return;
    }
    const mine = me && me.key ? me.key.id : "";
    clear(listEl, h("table", { class: "table keys" },
      h("thead", null, h("tr", null, ["Name", "ID", "Rights", "Toolsets", "Created", "State", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", null, keys.map((k) => h("tr", { "data-key": k.id, class: k.revoked ? "revoked" : "" },
        h("td", null, k.name || h("span", { class: "muted" }, "—"), k.id === mine ? h("span", { class: "pill run small" }, "this console") : null),
        h("td", null, h("code", { class: "small" }, k.id)),
        h("td", null, (k.rights || []).map((r) => h("span", { class: `chip static right-${r}` }, r))),
        h("td", null, k.toolsets && k.toolsets.length ? k.toolsets.join(", ") : h("span", { class: "muted" }, "every tool")),
        h("td", null, k.created_at ? timeEl(k.created_at) : h("span", { class: "muted" }, "—")),
        h("td", null, k.revoked ? h("span", { class: "pill err" }, "revoked") : h("span", { class: "pill ok" }, "active"),
          k.source === "config" ? h("span", { class: "muted small" }, " (configuration)") : null),
        h("td", null, !k.revoked && k.source === "file" && list.required && can(me, "keys")
          ? h("button", { type: "button", class: "danger small revoke", "aria-label": `Revoke ${k.name || k.id}`, onclick: (ev) => revoke(k, k.id === mine, ev.currentTarget) }, "Revoke")
          : k.source === "config" ? h("span", { class: "muted small", title: "Change server.keys in the configuration" }, "in server.keys") : null))))));
  }

  function drawForm(list) {
    if (!list.required) {
      clear(formBox);
      return;
    }
    const name = h("input", { type: "text", id: "key-name", required: true, maxlength: "64", autocomplete: "off", spellcheck: "false", placeholder: "e.g. reviewer" });
    const err = h("p", { class: "field-error", hidden: true, role: "alert" });
    const boxes = RIGHTS.map(([r, what]) => {
      const mayGrant = can(me, r);
      const box = h("input", { type: "checkbox", id: `right-${r}`, value: r, disabled: !mayGrant });
      return [box, h("label", { class: "check", for: `right-${r}`, title: mayGrant ? what : `This key cannot grant ${r}: it does not have it` },
        box, h("span", null, h("strong", null, r), h("span", { class: "muted small" }, ` — ${what}`)))];
    });
    const sets = toolsets.map((t) => {
      const box = h("input", { type: "checkbox", id: `ts-${t}`, value: t });
      return [box, h("label", { class: "check", for: `ts-${t}` }, box, h("span", null, t))];
    });
    const submit = h("button", { type: "submit", class: "primary", id: "key-create" }, "Create key");
    clear(formBox, h("form", { class: "card key-form", "aria-labelledby": "new-h", novalidate: true, onsubmit: async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      const body = { name: name.value.trim(), rights: boxes.filter(([b]) => b.checked).map(([b]) => b.value), toolsets: sets.filter(([b]) => b.checked).map(([b]) => b.value) };
      if (!body.name) {
        err.textContent = "Give the key a name, to tell it apart.";
        err.hidden = false;
        name.focus();
        return;
      }
      submit.disabled = true;
      try {
        const made = await api("/v1/keys", { method: "POST", body });
        showSecret(made);
        name.value = "";
        boxes.concat(sets).forEach(([b]) => (b.checked = false));
        load();
      } catch (e) {
        err.textContent = e.message;
        err.hidden = false;
      } finally {
        submit.disabled = false;
      }
    } },
    h("h2", { id: "new-h" }, "New key"),
    h("div", { class: "field" }, h("label", { for: "key-name", class: "field-label" }, "Name"), name),
    h("fieldset", { class: "rights" }, h("legend", { class: "field-label" }, "Rights besides read"), boxes.map(([, l]) => l)),
    sets.length ? h("fieldset", { class: "rights" }, h("legend", { class: "field-label" }, "Toolsets (none: every tool)"), sets.map(([, l]) => l)) : null,
    err, h("div", { class: "actions" }, submit)));
  }

  function showSecret(made) {
    const k = made.key;
    clear(secretBox, h("section", { class: "card secret-box", role: "status", "aria-labelledby": "secret-h" },
      h("h2", { id: "secret-h" }, `Key “${k.name}” created`),
      h("p", null, h("strong", null, "Copy it now: it is shown this once."), " The server keeps only its hash."),
      codeBlock(made.secret, "The new key's secret"),
      h("p", { class: "muted small" }, "Send it as ", h("code", null, "Authorization: Bearer KEY"), " or ", h("code", null, "X-API-Key: KEY"), "."),
      h("button", { type: "button", class: "ghost small", onclick: () => clear(secretBox) }, "I have copied it")));
    toast(`Created key ${k.name}`, "ok");
  }

  // revoke asks twice, on the button itself: a first click arms it (and
  // says what will happen), a second within five seconds revokes.
  async function revoke(k, own, btn) {
    if (!btn.dataset.armed) {
      btn.dataset.armed = "1";
      btn.textContent = own ? "Revoke this console's key?" : "Click again to revoke";
      setTimeout(() => { if (btn.isConnected) { delete btn.dataset.armed; btn.textContent = "Revoke"; } }, 5000);
      return;
    }
    btn.disabled = true;
    try {
      await api(`/v1/keys/${encodeURIComponent(k.id)}`, { method: "DELETE" });
      toast(`Revoked ${k.name || k.id}: every client using it is refused from now on`, "info");
      if (own && apiKey()) location.reload();
      else load();
    } catch (e) {
      btn.disabled = false;
      toast(`Could not revoke: ${e.message}`, "error");
    }
  }

  load();
  return {};
}
