// Package mcpbridge connects wield to the Model Context Protocol both ways,
// on the official Go SDK: it imports the tools of MCP servers into a
// [wield.Registry], and serves a registry to MCP clients.
//
// # Importing servers
//
// An [Importer] keeps the tools of the servers added to it in a registry:
//
//	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
//	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{Pins: pins})
//	defer im.Close()
//	err := im.Add(ctx, mcpbridge.ServerConfig{
//		Name:    "fs",
//		Command: []string{"node", "server-filesystem/dist/index.js", "/srv/data"},
//		Enabled: true,
//	})
//
// A [ServerConfig] names either a command (spoken to over stdio) or a URL
// (streamable HTTP, or the legacy SSE transport with Transport "sse"), with
// headers for HTTP (an API key, a bearer token), environment variables for
// the command and tags for every tool. It has the fields of
// toolfile.MCPServer, so a loaded configuration converts with
// mcpbridge.ServerConfig(s); the loader has already replaced ${NAME} in
// header values by the environment.
//
// Each remote tool becomes a [wield.Tool] of category mcp named
// "server__tool" ([ImportOptions.Naming] changes that), with the server's
// input and output schemas, its annotations read with MCP's defaults
// ([ImportAnnotations]: an unannotated tool is destructive and so needs
// confirmation, unless [ImportOptions.Permission] says otherwise), and its
// _meta tags followed by the configured ones. Calls go through the engine
// like any other: arguments are validated against the server's schema and
// always sent as an object, and the result is converted as seed 001 §7.2
// says ([ImportResult]): isError becomes a tool failure whose text the model
// reads, structuredContent is the output as is, a text is parsed as JSON
// when it is JSON, other content is its JSON form.
//
// # Outages and changes
//
// When a server goes away (a stdio process dies, an HTTP server stops
// answering) its tools stay registered: a call fails at once with a
// transient execution_error naming the server, while the importer
// reconnects with a doubling, jittered backoff ([ImportOptions.MinBackoff],
// MaxBackoff); the next call after the reconnection works. A server that
// cannot be reached when added is retried the same way, and [Importer.Add]
// says so with an error wrapping [ErrUnavailable]; so is one that has not
// listed its tools within its timeout ([ServerConfig].Timeout, else
// [ImportOptions].ImportTimeout, 10 s), so that a server that never answers
// tools/list cannot hold Add. A stdio server that sends a line that cannot
// be read (not JSON, or too large) has its connection reset, and the call
// fails with an execution_error saying so, not transient: the server is
// misbehaving, not down. When a server sends
// notifications/tools/list_changed, its tools are listed again: new ones are
// registered, vanished ones removed, changed ones updated. [Importer.Servers]
// reports each server's state for a status page. [Importer.Close] stops the
// stdio servers (a server that does not exit when its input closes gets
// SIGTERM after [ImportOptions.KillGrace], and SIGKILL after as long again;
// on Unix a stdio server runs in a process group of its own and the
// signals go to the group, so that what a wrapper such as `sh -c` or npx
// started goes too, and so does what a server leaves running when it
// exits) and removes the tools.
//
// # Pinning
//
// The first time a tool is imported its name, description and schemas are
// fingerprinted ([PinTool]: SHA-256 of canonical JSON) and kept, with the
// definition, in a [PinStore] ([FilePins] across runs, [MemPins] in
// memory). When a server later presents a different definition, whether
// while running or at the next start, the tool is registered with status
// held, which the engine refuses to call; a warning is logged and a
// tool_held event published, naming the server, the tool and the parts
// that changed. [Importer.Held] lists the held tools with a diff of the
// pinned and current definitions; [Importer.AcceptName] (or
// [Importer.Accept]) pins the new definition and makes the tool callable,
// and [Importer.ReloadPins] releases the tools another process accepted in
// the pin store. With [ImportOptions.FollowChanges] the change is accepted
// at once and reported as a tool_loaded event.
//
// # OAuth and elicitation
//
// A server behind OAuth is added with [Importer.AddOAuth] and an
// [OAuthConfig]: the authorization-code grant (through the SDK's auth
// package; client identity from a client ID metadata document, a
// pre-registered client or dynamic registration; the browser step by
// [AuthorizeOnLoopback] or a callback of your own), the client-credentials
// grant (a secret, or a signed JWT assertion), or enterprise-managed
// authorization ([OAuthConfig].IDToken: a person's ID token exchanged at
// the identity provider for an ID-JAG, and that for an access token).
// Tokens are kept in a
// [TokenStore] ([MemTokens], [FileTokens]) and sent only to the server they
// were issued for. With [ImportOptions.Elicit] set (for example to
// [ElicitDefaults]), the importer's client answers servers that ask for
// input.
//
// # Serving a registry
//
// [NewServer] serves an engine's registry, or one toolset, over streamable
// HTTP ([Server.Handler]: /mcp for every tool, /mcp/{toolset} for one;
// stateful sessions or stateless) and stdio ([Server.ServeStdio]). Every
// tools/call goes through the engine; a tool's failure is an isError
// result, a system failure an internal error without its text. A Go tool
// talks to the MCP client from its context: [Progress], [Log], [Elicit] and
// [Sample] (each fails with [ErrNotMCP] outside MCP and [ErrUnsupported]
// when the client lacks the capability); a 2026-07-28 client is asked by
// answering input_required, the call parked until the retry brings the
// answer (with [ServerOptions].InputRequired). [NewApprover] asks the client to
// approve a confirm tool by elicitation (in a session mid-call; for a
// 2026-07-28 client by answering input_required, see
// [ServerOptions].InputRequired), else defers to the approval inbox.
// Call records are resources (wield://calls/{id}, and /output for the full
// output); Host and Origin are checked against DNS rebinding. tools/list
// and tools/call have a fast path that answers as the SDK would
// ([ServerOptions.DisableFastPath] turns it off).
//
// # Protocol revisions
//
// Both eras of MCP are served on every endpoint, chosen per request
// ([ProtocolVersions]): 2026-07-28, whose requests stand alone (no
// session; server/discover, and the revision in the MCP-Protocol-Version
// header and _meta), and the initialize handshake of 2025-11-25, 2025-06-18,
// 2025-03-26 and 2024-11-05, with sessions. A server may ask nothing of a
// 2026-07-28 client mid-call, so a confirm tool's call from one waits in
// the approval inbox, and a client that declared elicitation or sampling
// is steered to the handshake at server/discover, where it can be asked.
// The importer's client discovers first too, and falls back to the
// handshake: it imports servers of either era.
//
// Besides the tools, a server offers the [Resource], [ResourceTemplate]
// and [Prompt] values of its options. A tool sends images, audio or
// resources as its result's content by returning [ContentOutput]'s object.
// Tool files can declare such tools with the entry types [ContentKind] and
// [ClientKind], and tools of an imported server with [Importer.Kind].
package mcpbridge
