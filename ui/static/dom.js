// Small helpers to build the DOM without innerHTML: every text that comes
// from the API is set as text, never parsed as markup.

const SVG = "http://www.w3.org/2000/svg";

// h builds an element: h("a", {href: "#/x", class: "y", onclick: f}, "text", child).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

// s builds an SVG element the same way.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2), v);
    } else if (k === "dataset") {
      Object.assign(el.dataset, v);
    } else if (k === "value" && "value" in el) {
      el.value = v;
    } else if (k === "checked" || k === "selected" || k === "disabled") {
      el[k] = Boolean(v);
    } else if (k === "title" || k.startsWith("aria-")) {
      el.setAttribute(k, visible(String(v)));
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : visible(String(c)));
  }
}

// UNSAFE matches what would make text read as other than its characters:
// control characters (C0 but newline and tab, DEL, C1 with U+009B CSI), the
// bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069) and the line and paragraph separators. A tool's description
// or an approval's arguments holding U+202E would show
// "…/\u202etxt.sdrawkcab" as "…/backwards.txt".
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

// visible writes every unsafe character as an escape a person can see
// (\x1b, \r, \u202e), the same as the CLI's safetext: every text h and clear
// put on the page goes through it, so what is shown is what will run.
export function visible(text) {
  return String(text).replace(UNSAFE, (c) => {
    if (c === "\r") return "\\r";
    const n = c.charCodeAt(0);
    return n < 0x80 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}

// clear empties an element and fills it with children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// fmtMS formats milliseconds for people: 0.4 ms, 12 ms, 1.2 s, 2 min 3 s.
export function fmtMS(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return "—";
  if (ms === 0) return "0 ms";
  if (ms < 0.1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60000);
  return `${m} min ${Math.round((ms % 60000) / 1000)} s`;
}

// fmtTime formats an RFC 3339 time as local date and time.
export function fmtTime(t, withDate = true) {
  if (!t || t.startsWith("0001-")) return "—";
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return t;
  const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  if (!withDate) return time;
  const today = new Date();
  if (d.toDateString() === today.toDateString()) return time;
  return `${d.toLocaleDateString([], { year: "numeric", month: "short", day: "numeric" })} ${time}`;
}

// timeEl is a <time> showing fmtTime with the full time as its title.
export function timeEl(t, withDate = true) {
  return h("time", { datetime: t, title: t }, fmtTime(t, withDate));
}

// fmtRelative says how far a time is from now: "in 4 min", "12 s ago".
export function fmtRelative(t, now = Date.now()) {
  const diff = new Date(t).getTime() - now;
  const sec = Math.round(Math.abs(diff) / 1000); // whole seconds first, so no "60 s"
  let v;
  if (sec < 60) v = `${sec} s`;
  else if (sec < 3600) v = `${Math.floor(sec / 60)} min ${sec % 60} s`;
  else if (sec < 86400) v = `${Math.floor(sec / 3600)} h ${Math.floor((sec % 3600) / 60)} min`;
  else v = `${Math.round(sec / 86400)} d`;
  return diff >= 0 ? `in ${v}` : `${v} ago`;
}

// pretty formats JSON (a value or its text) with two spaces.
export function pretty(v) {
  if (v === undefined) return "";
  if (typeof v === "string") {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

// codeBlock is a <pre> of pretty JSON with a copy button.
export function codeBlock(v, label) {
  const text = pretty(v);
  const pre = h("pre", { class: "code", tabindex: "0", "aria-label": label || "JSON" }, text);
  const copy = h("button", {
    type: "button", class: "ghost small copy", "aria-label": `Copy ${label || "JSON"}`,
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        copy.textContent = "Copied";
      } catch {
        copy.textContent = "Copy failed";
      }
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    },
  }, "Copy");
  return h("div", { class: "code-wrap" }, copy, pre);
}

// statusPill shows ok or an error type.
export function statusPill(ok, errorType) {
  return ok
    ? h("span", { class: "pill ok" }, "ok")
    : h("span", { class: "pill err", title: errorType || "error" }, errorType || "error");
}

// empty is an empty state: a title and a hint.
export function empty(title, hint) {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), hint ? h("p", null, hint) : null);
}

// errorBox shows an error where content would be.
export function errorBox(err, retry) {
  return h("div", { class: "error-box", role: "alert" },
    h("strong", null, err.code ? `${err.code}: ` : "Error: "), err.message || String(err),
    retry ? h("button", { type: "button", class: "small", onclick: retry }, "Retry") : null);
}

// toast shows a short message in the corner.
export function toast(msg, kind = "info") {
  const box = document.getElementById("toasts");
  const t = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, msg);
  box.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 8000 : 4000);
}

// debounce delays f until calls pause for ms.
export function debounce(f, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => f(...args), ms);
  };
}
