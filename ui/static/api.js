// The API client: JSON over fetch, with the API key of the tab, and the
// 401 turned into a request for a key.

const KEY = "wield.apiKey";

// ApiError is an answer of the API in its error shape, or a network failure.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY) || "";
}

export function setApiKey(k) {
  if (k) sessionStorage.setItem(KEY, k);
  else sessionStorage.removeItem(KEY);
  keyListeners.forEach((f) => f(k));
}

const keyListeners = new Set();

// onKeyChange calls f whenever the key is set or forgotten.
export function onKeyChange(f) {
  keyListeners.add(f);
}

// askKey is set by the app: it asks the person for a key and resolves
// once one is given.
let askKey = async () => {
  throw new ApiError(401, "unauthorized", "an API key is required");
};

export function setKeyPrompt(f) {
  askKey = f;
}

export function authHeaders() {
  const k = apiKey();
  return k ? { Authorization: `Bearer ${k}` } : {};
}

// api sends a request and returns the decoded JSON answer. A 401 asks for
// a key and tries again once the person gave one.
export async function api(path, { method = "GET", body, signal } = {}) {
  for (let attempt = 0; ; attempt++) {
    let resp;
    try {
      resp = await fetch(path, {
        method,
        signal,
        headers: { Accept: "application/json", ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...authHeaders() },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new ApiError(0, "network", "the server cannot be reached: " + e.message);
    }
    if (resp.status === 401 && attempt < 3) {
      await askKey(apiKey() ? "The key was refused. Try another." : "");
      continue;
    }
    const text = await resp.text();
    let data;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiError(resp.status, "bad_answer", `the server answered ${resp.status} with something that is not JSON`);
    }
    if (!resp.ok) {
      const e = data && data.error;
      throw new ApiError(resp.status, e ? e.code : String(resp.status), e ? e.message : `HTTP ${resp.status}`);
    }
    return data;
  }
}

// qs builds a query string of the non-empty values.
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") p.set(k, v);
  }
  const str = p.toString();
  return str ? `?${str}` : "";
}
