// The one event stream of the console: GET /v1/events as Server-Sent
// Events. Without an API key it is an EventSource, which reconnects by
// itself with Last-Event-ID. EventSource cannot send an Authorization
// header, so with a key the stream is read with fetch instead, and this
// module reconnects it with Last-Event-ID the same way.

import { api, apiKey, authHeaders, onKeyChange } from "./api.js";

const listeners = new Set();
const stateListeners = new Set();
let state = "connecting";
let lastId = "";
let source = null; // EventSource
let abort = null; // AbortController of the fetch stream
let retryMS = 2000;
let timer = null;

// onEvent calls f with every event (the decoded JSON); it returns the
// function that stops the calls.
export function onEvent(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

// onState calls f with "connecting", "live" or "down" as the stream's
// state changes, and at once with the current state.
export function onState(f) {
  stateListeners.add(f);
  f(state);
  return () => stateListeners.delete(f);
}

function setState(s) {
  if (s === state) return;
  state = s;
  stateListeners.forEach((f) => f(s));
}

function dispatch(id, data) {
  if (id) lastId = id;
  let e;
  try {
    e = JSON.parse(data);
  } catch {
    return;
  }
  listeners.forEach((f) => {
    try {
      f(e);
    } catch (err) {
      console.error("event listener failed", err);
    }
  });
}

function stop() {
  clearTimeout(timer);
  if (source) source.close();
  source = null;
  if (abort) abort.abort();
  abort = null;
}

// start opens the stream, as EventSource or fetch depending on the key.
export function start() {
  stop();
  setState("connecting");
  if (apiKey()) fetchStream();
  else eventSource();
}

function later(f) {
  clearTimeout(timer);
  timer = setTimeout(f, retryMS);
}

const TYPES = [
  "execution_started", "execution_completed", "execution_failed", "validation_error",
  "permission_requested", "permission_decided", "tool_loaded", "tool_added", "tool_updated",
  "tool_removed", "tool_shadowed", "reload_started", "reload_completed", "load_error",
  "tool_held", "execution_progress",
];

function eventSource() {
  // A new EventSource cannot set Last-Event-ID; the API takes it as a
  // parameter too, so a stream opened again misses nothing the bus holds.
  const url = "/v1/events" + (lastId ? `?last_event_id=${encodeURIComponent(lastId)}` : "");
  const es = new EventSource(url);
  source = es;
  es.onopen = () => setState("live");
  const handle = (ev) => dispatch(ev.lastEventId, ev.data);
  for (const t of TYPES) es.addEventListener(t, handle);
  es.onmessage = handle;
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      // The server refused the stream (a 401 with keys, or it is down):
      // a plain request finds out, asking for a key if that is why.
      setState("down");
      es.close();
      if (source === es) {
        source = null;
        api("/v1/limiter").then(() => later(start), () => later(start));
      }
    } else {
      setState("connecting"); // EventSource reconnects by itself
    }
  };
}

async function fetchStream() {
  const ctl = new AbortController();
  abort = ctl;
  try {
    const headers = { Accept: "text/event-stream", ...authHeaders() };
    if (lastId) headers["Last-Event-ID"] = lastId;
    const resp = await fetch("/v1/events", { headers, signal: ctl.signal, cache: "no-store" });
    if (resp.status === 401) {
      setState("down");
      await api("/v1/limiter").catch(() => {}); // asks for a key
      if (abort === ctl) later(start);
      return;
    }
    if (!resp.ok || !resp.body) throw new Error(`HTTP ${resp.status}`);
    setState("live");
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let id = "", data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (data.length) dispatch(id, data.join("\n"));
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        let v = i < 0 ? "" : line.slice(i + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "data") data.push(v);
        else if (field === "id") id = v;
        else if (field === "retry" && /^\d+$/.test(v)) retryMS = Number(v);
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
  }
  if (abort === ctl) {
    setState("connecting");
    later(start);
  }
}

onKeyChange(() => start());
