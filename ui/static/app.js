// The console's entry: the router (by URL hash), the key prompt, the
// header's stream state and approval badge.

import { setKeyPrompt, setApiKey, apiKey, onKeyChange } from "./api.js";
import { start as startEvents, onState } from "./events.js";
import { h, clear, empty } from "./dom.js";
import * as tools from "./tools.js";
import * as calls from "./calls.js";
import * as stats from "./stats.js";
import * as approvals from "./approvals.js";
import * as toolsets from "./toolsets.js";
import * as limiter from "./limiter.js";
import * as keys from "./keys.js";
import { onWho } from "./who.js";
import * as imports from "./imports.js";

const main = document.getElementById("main");
let current = { section: "", ctl: null };

// route reads location.hash: #/section/rest?query.
function parse() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [pathPart, query = ""] = raw.split("?");
  const parts = pathPart.split("/").filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { section: parts[0] || "tools", rest: parts.slice(1).join("/"), params: new URLSearchParams(query) };
}

const TITLES = { tools: "Tools", live: "Live calls", calls: "History", stats: "Statistics", approvals: "Approvals",
  toolsets: "Toolsets and agents", limiter: "Limiter", keys: "API keys", imports: "MCP imports" };

function route() {
  const { section, rest, params } = parse();
  document.querySelectorAll("#nav a").forEach((a) => {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  document.title = `${rest ? rest + " · " : ""}${TITLES[section] || "Not found"} · wield`;
  // The tools page keeps its list (and the search's focus) when only the
  // tool changes.
  if (section === "tools" && current.section === "tools" && current.ctl && current.ctl.update) {
    current.ctl.update(rest);
    return;
  }
  if (current.ctl && current.ctl.close) current.ctl.close();
  current = { section, ctl: null };
  main.classList.remove("wide");
  switch (section) {
    case "tools":
      main.classList.add("wide");
      current.ctl = tools.page(main, rest);
      break;
    case "live":
      current.ctl = calls.livePage(main, params);
      break;
    case "calls":
      current.ctl = rest ? calls.callPage(main, rest) : calls.historyPage(main, params);
      break;
    case "stats":
      current.ctl = stats.page(main, params);
      break;
    case "approvals":
      current.ctl = approvals.page(main);
      break;
    case "toolsets":
      current.ctl = toolsets.page(main);
      break;
    case "limiter":
      current.ctl = limiter.page(main);
      break;
    case "keys":
      current.ctl = keys.page(main);
      break;
    case "imports":
      current.ctl = imports.page(main);
      break;
    default:
      clear(main, empty("No such page", h("a", { href: "#/tools" }, "Go to the tools")));
  }
  // Move the focus to the new page's heading, for keyboards and readers,
  // unless the person is typing somewhere already.
  const heading = main.querySelector("h1[tabindex], h2[tabindex]");
  if (heading && (document.activeElement === document.body || !main.contains(document.activeElement))) {
    heading.focus({ preventScroll: true });
  }
}

// The key prompt: one dialog, shared by every request that got a 401.
const dialog = document.getElementById("key-dialog");
const keyForm = document.getElementById("key-form");
const keyInput = document.getElementById("key-input");
const keyError = document.getElementById("key-error");
let waiting = null;

setKeyPrompt((msg) => {
  if (!waiting) {
    waiting = new Promise((resolve) => {
      keyForm.onsubmit = (ev) => {
        ev.preventDefault();
        const k = keyInput.value.trim();
        if (!k) {
          keyError.textContent = "Enter a key.";
          keyError.hidden = false;
          return;
        }
        keyInput.value = "";
        dialog.close();
        waiting = null;
        setApiKey(k);
        resolve();
      };
    });
    keyError.textContent = msg || "";
    keyError.hidden = !msg;
    if (!dialog.open) dialog.showModal();
    keyInput.focus();
  }
  return waiting;
});
// The dialog cannot be dismissed without a key: the API answers nothing else.
dialog.addEventListener("cancel", (ev) => ev.preventDefault());

const signout = document.getElementById("signout");
signout.hidden = !apiKey();
onKeyChange((k) => {
  signout.hidden = !k;
});
signout.addEventListener("click", () => {
  setApiKey("");
  route();
});

// The header says which key the console uses, and what it may do.
const whoEl = document.getElementById("who");
onWho((w) => {
  if (!whoEl) return;
  whoEl.hidden = !w || !w.key;
  if (w && w.key) {
    whoEl.textContent = w.key.name || w.key.id;
    whoEl.title = `Key ${w.key.id}: ${(w.rights || []).join(", ")}${w.toolsets && w.toolsets.length ? ` on ${w.toolsets.join(", ")}` : ""}`;
  }
});

const streamEl = document.getElementById("stream-state");
onState((st) => {
  streamEl.dataset.state = st;
  streamEl.querySelector(".label").textContent = st === "live" ? "live" : st === "down" ? "offline" : "connecting";
  streamEl.title = st === "live" ? "Receiving events live" : st === "down" ? "The event stream is down; retrying" : "Connecting to the event stream";
});

const badge = document.getElementById("pending-badge");
approvals.onPendingCount((n) => {
  badge.hidden = n === 0;
  badge.textContent = String(n);
  badge.setAttribute("aria-label", `${n} pending`);
});

window.addEventListener("hashchange", route);
if (!location.hash) history.replaceState(null, "", "#/tools");
route();
startEvents();
approvals.refreshCount();
