// Preloaded (node --require) into the npm MCP servers and the conformance
// suite the tests run: a server that listens on a bare port listens on
// 127.0.0.1 only, and once it listens it writes "WIELD_LISTENING <port>" to
// stderr, so that a test can ask for port 0 and learn the port it got.
//
// The bind stays synchronous, as it is for a bare port (some servers read
// server.address() right after listen): listen(port, host) would resolve the
// host first and bind later, so the socket is set up directly with the
// address already known, as net.Server.listen does for a bare port.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") process.stderr.write(`WIELD_LISTENING ${a.port}\n`);
  });
  const port = args[0];
  const bare = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (bare && (args.length === 1 || typeof args[1] === "function") && typeof this._listen2 === "function") {
    if (typeof args[1] === "function") this.once("listening", args[1]);
    this._listen2("127.0.0.1", Number(port), 4, 511, undefined, 0);
    return this;
  }
  return listen.apply(this, args);
};
