package toolfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wieldhq/wield/internal/oauthtest"
)

// TestLoadConfigMCPOAuth checks mcp_servers[].oauth: read with its
// secrets from the environment and its key file read and parsed, and
// refused at its line for an unknown grant, a grant without what it needs,
// a key that cannot be read or does not parse, or a server it cannot fit.
func TestLoadConfigMCPOAuth(t *testing.T) {
	_, keyPEM, err := oauthtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRM_SECRET", "s3cret")

	src := `mcp_servers:
  - name: crm
    url: http://127.0.0.1:1/mcp
    oauth: {grant: client_credentials, client_id: wield, client_secret: "${CRM_SECRET}", scopes: [a, b]}
  - name: signed
    url: http://127.0.0.1:1/mcp
    oauth: {grant: client_credentials, client_id: wield, private_key_file: key.pem}
  - name: notes
    url: http://127.0.0.1:1/mcp
    oauth: {offline_access: true, redirect_port: 8765}
  - {name: plain, url: "http://127.0.0.1:1/mcp"}
`
	p := writeConfig(t, src)
	keyFile := filepath.Join(filepath.Dir(p), "key.pem")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]MCPOAuth{
		"crm":    {Grant: GrantClientCredentials, ClientID: "wield", ClientSecret: "s3cret", Scopes: []string{"a", "b"}},
		"signed": {Grant: GrantClientCredentials, ClientID: "wield", PrivateKeyFile: keyFile, PrivateKey: keyPEM},
		"notes":  {Grant: GrantAuthorizationCode, OfflineAccess: true, RedirectPort: 8765},
	}
	if !reflect.DeepEqual(cfg.MCPOAuth, want) {
		t.Errorf("oauth = %+v\nwant %+v", cfg.MCPOAuth, want)
	}

	bad := filepath.Join(filepath.Dir(p), "bad.pem")
	if err := os.WriteFile(bad, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const head = "mcp_servers:\n  - name: s\n"
	for src, want := range map[string]string{
		head + "    url: http://h/mcp\n    oauth: {grant: password}\n":                                                              `:4:20: mcp server s: oauth.grant: "password" is not client_credentials or authorization_code`,
		head + "    url: http://h/mcp\n    oauth: {grant: client_credentials, client_id: c}\n":                                      ":4:13: mcp server s: oauth.client_secret: the client_credentials grant needs a client_secret or a private_key_file",
		head + "    url: http://h/mcp\n    oauth: {grant: client_credentials, client_secret: x}\n":                                  ":4:13: mcp server s: oauth.client_id: the client_credentials grant needs a client_id",
		head + "    url: http://h/mcp\n    oauth: {grant: client_credentials, client_id: c, private_key_file: none.pem}\n":          `:4:72: mcp server s: oauth.private_key_file: "DIR/none.pem" cannot be read: no such file or directory`,
		head + "    command: [srv]\n    oauth: {grant: client_credentials, client_id: c, client_secret: x}\n":                       ":4:5: mcp server s: oauth: a stdio server (command) takes no oauth: it authorizes a streamable HTTP server (url)",
		head + "    url: http://h/mcp\n    transport: sse\n    oauth: {client_id: c}\n":                                             ":5:5: mcp server s: oauth: needs the http transport, not sse",
		head + "    url: http://h/mcp\n    headers: {Authorization: x}\n    oauth: {client_id: c}\n":                                ":5:5: mcp server s: oauth: sets the Authorization header; remove it from headers",
		head + "    url: http://h/mcp\n    oauth: {client_secret: x}\n":                                                             ":4:28: mcp server s: oauth.client_secret: a client_secret needs the client_id it belongs to",
		head + "    url: http://h/mcp\n    oauth: {grant: client_credentials, client_id: c, client_secret: x, redirect_port: 80}\n": ":4:87: mcp server s: oauth.redirect_port: only the authorization_code grant has a redirect (no person logs in with client_credentials)",
		head + "    url: http://h/mcp\n    oauth: {redirect_port: 70000}\n":                                                         ":4:28: mcp server s: oauth.redirect_port: 70000 is not a port (1-65535, or 0 for a free one)",
		head + "    url: http://h/mcp\n    oauth: {private_key_file: key.pem}\n":                                                    ":4:31: mcp server s: oauth.private_key_file: a private key signs client assertions of the client_credentials grant only",
		head + "    url: http://h/mcp\n    oauth: {token: t}\n":                                                                     `:4:13: mcp server s: oauth: unknown field "token"`,
		head + "    url: http://h/mcp\n    oauth: 3\n":                                                                              ":4:12: mcp server s: oauth: expected a mapping, got integer",
	} {
		p := writeConfig(t, src)
		if strings.Contains(src, "key.pem") {
			if err := os.WriteFile(filepath.Join(filepath.Dir(p), "key.pem"), keyPEM, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		want = strings.ReplaceAll(want, "DIR", filepath.Dir(p))
		if got := configProblems(t, p); len(got) != 1 || got[0] != p+want {
			t.Errorf("%q: problems %q\nwant %q", src, got, p+want)
		}
	}
	// A key that does not parse.
	src = head + "    url: http://h/mcp\n    oauth: {grant: client_credentials, client_id: c, private_key_file: " + bad + "}\n"
	p = writeConfig(t, src)
	if got := configProblems(t, p); len(got) != 1 || !strings.Contains(got[0], ":4:72: mcp server s: oauth.private_key_file: \""+bad+"\": private key: ") {
		t.Errorf("a key that does not parse: problems %q", got)
	}
	// An unset secret turns the server off, with a warning, as in headers.
	os.Unsetenv("NO_SUCH_SECRET")
	p = writeConfig(t, head+"    url: http://h/mcp\n    oauth: {grant: client_credentials, client_id: c, client_secret: \"${NO_SUCH_SECRET}\"}\n")
	cfg, err = LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.MCPServers) != 0 || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Message, "NO_SUCH_SECRET") {
		t.Errorf("unset secret: servers %+v, warnings %v", cfg.MCPServers, cfg.Warnings)
	}
}
