// Command wield-mcp-conformance-client is the client under test when the
// MCP conformance suite (@modelcontextprotocol/conformance, installed by
// scripts/npm-up) checks wield's importer: it imports the tools of the
// suite's server with mcpbridge.Importer and calls them through the engine,
// as an agent would.
//
//	node .cache/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js \
//		client --command wield-mcp-conformance-client --scenario tools_call
//
// The suite runs it with the server's URL as the last argument, the
// scenario in MCP_CONFORMANCE_SCENARIO and, for some scenarios, settings in
// MCP_CONFORMANCE_CONTEXT (a JSON object: a pre-registered client's id and
// secret or private key, an identity provider's ID token). It plays every
// client scenario of suite 0.1.16:
// the importer's connection and calls, elicitation answered with the form's
// defaults (mcpbridge.ElicitDefaults), and OAuth (Importer.AddOAuth): the
// authorization code grant, whose browser step it completes by following
// the authorization URL of the suite's authorization server, which approves
// by itself, the client credentials grant with a secret or a signed
// assertion, and enterprise-managed authorization (an ID token exchanged
// for an ID-JAG, then for an access token). Exit code 0 when the scenario ran, 1 when it failed, 2 for
// usage errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> %s <server-url>\n", os.Args[0])
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := Run(ctx, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "wield-mcp-conformance-client:", err)
		os.Exit(1)
	}
}

// server is the name the suite's server is imported under.
const server = "conformance"

// The pre-registered client the suite may hand over in
// MCP_CONFORMANCE_CONTEXT.
type suiteContext struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	// The identity provider of enterprise-managed authorization.
	IdPClientID string `json:"idp_client_id"`
	IdPIDToken  string `json:"idp_id_token"`
	IdPIssuer   string `json:"idp_issuer"`
}

// The client of the authorization code grant: the suite's authorization
// server accepts a client ID metadata document at this URL without
// fetching it, registers any redirect URL, and redirects at once.
const (
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
	redirectURL       = "http://localhost:3000/callback"
)

// scenarios are the scenarios played besides those of OAuth (auth/...).
var scenarios = []string{"elicitation-sep1034-client-defaults", "initialize", "sse-retry", "tools_call"}

// Supported reports whether Run knows what the scenario asks of a client:
// one of the scenarios above, or any of OAuth, which all authorize and call
// the tool test-tool.
func Supported(scenario string) bool {
	return slices.Contains(scenarios, scenario) || strings.HasPrefix(scenario, "auth/")
}

// Run imports the tools of the server at url as the scenario says and
// plays it; suiteCtx is MCP_CONFORMANCE_CONTEXT, possibly empty. It returns
// an error for a scenario that is not [Supported], a server that cannot be reached or
// authorized, and a call that fails.
func Run(ctx context.Context, url, scenario, suiteCtx string) error {
	if !Supported(scenario) {
		return fmt.Errorf("scenario %q is not supported (supported: %s and auth/*)", scenario, strings.Join(scenarios, ", "))
	}
	var sc suiteContext
	if suiteCtx != "" {
		if err := json.Unmarshal([]byte(suiteCtx), &sc); err != nil {
			return fmt.Errorf("scenario %s: MCP_CONFORMANCE_CONTEXT: %w", scenario, err)
		}
	}
	opts := &mcpbridge.ImportOptions{
		// The suite's tools are fixtures without annotations, which MCP's
		// defaults make destructive; no person is here to confirm them.
		Permission: wield.PermissionAuto,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if strings.HasPrefix(scenario, "elicitation-") {
		opts.Elicit = mcpbridge.ElicitDefaults
	}
	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, opts)
	defer im.Close()
	cfg := mcpbridge.ServerConfig{Name: server, URL: url, Enabled: true}
	var err error
	if oauth := oauthFor(scenario, sc); oauth != nil {
		err = im.AddOAuth(ctx, cfg, oauth)
	} else {
		err = im.Add(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("scenario %s: %w", scenario, err)
	}
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	if err := play(ctx, scenario, im, e); err != nil {
		return fmt.Errorf("scenario %s: %w", scenario, err)
	}
	return nil
}

// oauthFor returns the OAuth configuration of an auth/ scenario, nil for
// the others.
func oauthFor(scenario string, sc suiteContext) *mcpbridge.OAuthConfig {
	if !strings.HasPrefix(scenario, "auth/") {
		return nil
	}
	if sc.IdPIDToken != "" {
		// The person signed in at the identity provider already: the
		// suite hands over the ID token it issued.
		return &mcpbridge.OAuthConfig{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret,
			IdPIssuer: sc.IdPIssuer, IdPClientID: sc.IdPClientID,
			IDToken: func(context.Context) (string, error) { return sc.IdPIDToken, nil }}
	}
	if strings.HasPrefix(scenario, "auth/client-credentials-") {
		return &mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: sc.ClientID,
			ClientSecret: sc.ClientSecret, PrivateKey: []byte(sc.PrivateKeyPEM)}
	}
	return &mcpbridge.OAuthConfig{
		ClientID:          sc.ClientID, // set in auth/pre-registration only
		ClientSecret:      sc.ClientSecret,
		ClientMetadataURL: clientMetadataURL,
		RedirectURL:       redirectURL,
		Authorize:         followAuthorization,
	}
}

// followAuthorization is the browser of the authorization code grant: it
// opens the authorization URL and reads the redirect it answers with (the
// suite's authorization server approves at once; it must be on loopback).
func followAuthorization(ctx context.Context, authURL string) (*mcpbridge.OAuthRedirect, error) {
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	if h := req.URL.Hostname(); h != "localhost" && h != "127.0.0.1" && h != "::1" {
		return nil, fmt.Errorf("authorization server %s is not on loopback", req.URL.Host)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, fmt.Errorf("the authorization server answered %s without a redirect", resp.Status)
	}
	return mcpbridge.ParseOAuthRedirect(loc)
}

// play makes the calls of the scenario.
func play(ctx context.Context, scenario string, im *mcpbridge.Importer, e *engine.Engine) error {
	switch {
	case scenario == "initialize":
		if st := im.Servers()[0]; !st.Connected {
			return fmt.Errorf("not connected: %s", st.LastError)
		}
		return nil
	case scenario == "tools_call":
		return call(ctx, e, "add_numbers", `{"a": 5, "b": 3}`, `"The sum of 5 and 3 is 8"`)
	case scenario == "sse-retry":
		return call(ctx, e, "test_reconnection", `{}`, `"Reconnection test completed successfully"`)
	case scenario == "elicitation-sep1034-client-defaults":
		// The suite checks the answer it got; the tool says what it saw.
		return call(ctx, e, "test_client_elicitation_defaults", `{}`, "")
	case strings.HasPrefix(scenario, "auth/"):
		return call(ctx, e, "test-tool", `{}`, `"test"`)
	}
	return errors.New("the scenario is not supported")
}

// call runs one imported tool through the engine and compares its output
// with want, unless want is empty.
func call(ctx context.Context, e *engine.Engine, tool, args, want string) error {
	name := server + "__" + tool
	res, err := e.Call(ctx, wield.Call{Tool: name, Arguments: json.RawMessage(args)})
	switch {
	case err != nil:
		return fmt.Errorf("call %s: %w", name, err)
	case !res.OK:
		return fmt.Errorf("call %s: %s: %s", name, res.ErrorType, res.Error)
	case want != "" && string(res.Output) != want:
		return fmt.Errorf("call %s: output %s, want %s", name, res.Output, want)
	}
	return nil
}
