// Who the console is: GET /v1/whoami, asked once per key, so that pages
// offer only what the key may do and say why the rest is off.

import { api, onKeyChange } from "./api.js";

let current = null; // the promise of the answer
const listeners = new Set();

// who resolves to the whoami answer ({required, key?, rights, toolsets?}),
// or to null when the server could not say (an older server, or down).
export function who() {
  if (!current) {
    current = api("/v1/whoami").catch(() => null);
    current.then((w) => listeners.forEach((f) => f(w)));
  }
  return current;
}

// onWho calls f with every new answer (after a key change), and once now.
export function onWho(f) {
  listeners.add(f);
  who().then(f);
  return () => listeners.delete(f);
}

// can says whether an answer grants a right. Without an answer the console
// offers everything and lets the server refuse.
export function can(w, right) {
  return !w || (w.rights || []).includes(right);
}

// lacks is the sentence that says why something is off.
export function lacks(w, right, what) {
  const name = w && w.key ? `This key (${w.key.name || w.key.id})` : "This key";
  return `${name} lacks the “${right}” right, so it cannot ${what}. Make a key with it: wield keys create --rights ${right}`;
}

onKeyChange(() => {
  current = null;
  who();
});
