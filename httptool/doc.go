// Package httptool makes tools that call HTTP APIs, and guards every request
// they send against server-side request forgery.
//
// # Declaring a tool
//
// A [Spec] describes one request: method, URL template, query, headers, body
// template and authentication. [New] checks it against the tool's input
// schema and returns a [wield.Tool] in category http:
//
//	spec := httptool.Spec{
//		URL:  "https://api.example.com/v1/users/{id}?q={query}",
//		Auth: &httptool.Auth{Type: "bearer", Env: "EXAMPLE_TOKEN"},
//	}
//	tool, err := httptool.New("get_user", "Look up a user", input, spec, nil)
//
// The tool returns {"status_code", "headers", "body"}, the body parsed when
// the response is JSON. A 404 is an answer for the model to read, not an
// error; a dropped connection is a transient error, retried for idempotent
// methods.
//
// # The guard
//
// A [Guard] refuses loopback, private, link-local (with the cloud metadata
// address), unspecified, multicast and CGNAT addresses, in IPv4 and IPv6 and
// IPv4-in-IPv6 forms, unless a range or host is allowed explicitly. Its
// [Guard.Client] checks every address a name resolves to and dials the
// checked address, and re-checks each redirect. Refusals are permission_denied
// errors whose message tells the model what happened.
//
// Ranges may be opened on one port only ([Guard.AllowPorts], [Endpoint]:
// "127.0.0.1:8080", "10.0.0.0/8:443"; a host in AllowHosts as
// "localhost:8080"). Whatever is open, the addresses wield itself listens on
// ([Listening], told by `wield serve` and `wield mcp --http` once they
// listen) are refused at connect time unless named with their port: a tool
// must not call the server that runs it.
//
// The output of a tool keeps no credential header: Set-Cookie,
// Authorization and other headers named as secrets are [REDACTED].
package httptool
