//go:build unix

package journeys

import (
	"slices"
	"strings"
	"testing"

	"github.com/wieldhq/wield/internal/oauthtest"
)

// TestJourneyMCPOAuthClientCredentials: an MCP server that demands a bearer
// token from its authorization server (protected resource metadata, token
// endpoint) is imported by `wield list` and called by `wield call` with
// mcp_servers[].oauth of grant client_credentials: a client secret from the
// environment, or a private key file (private_key_jwt). A wrong secret is a
// warning that names the refusal and never shows the secret; `wield
// validate` refuses a key file that does not parse, at its line.
func TestJourneyMCPOAuthClientCredentials(t *testing.T) {
	k, keyPEM, err := oauthtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	a := oauthtest.New(&k.PublicKey)
	defer a.Close()
	u := newUser(t)
	u.write("crm-key.pem", string(keyPEM))
	u.setenv("CRM_SECRET", oauthtest.ClientSecret)
	u.write("wield.yaml", `mcp_servers:
  - name: crm
    url: "`+a.MCPURL()+`"
    oauth: {grant: client_credentials, client_id: `+oauthtest.ClientID+`, client_secret: "${CRM_SECRET}", scopes: [tools]}
  - name: signed
    url: "`+a.MCPURL()+`"
    oauth: {grant: client_credentials, client_id: `+oauthtest.ClientID+`, private_key_file: crm-key.pem}
`)
	u.must("validate", "wield.yaml")
	r := u.must("--config", "wield.yaml", "list")
	if !strings.Contains(r.stdout, "crm__whoami") || !strings.Contains(r.stdout, "signed__whoami") {
		t.Fatalf("the tools of the protected server are not listed:\n%s", r)
	}
	for _, tool := range []string{"crm__whoami", "signed__whoami"} {
		r = u.must("--config", "wield.yaml", "call", tool)
		var res struct {
			OK     bool   `json:"ok"`
			Output string `json:"output"`
		}
		r.json(t, &res)
		if !res.OK || res.Output != "authorized" {
			t.Errorf("%s:\n%s", tool, r)
		}
	}
	if n := len(slices.DeleteFunc(a.Grants(), func(g string) bool { return g == "client_credentials" })); n != 0 || len(a.Grants()) == 0 {
		t.Errorf("token requests %q, want client_credentials only", a.Grants())
	}

	u.setenv("CRM_SECRET", "not-the-secret-42")
	r = u.wield("--config", "wield.yaml", "call", "crm__whoami")
	if r.code == 0 || !strings.Contains(r.stderr, "mcp server crm") || !strings.Contains(r.stderr, "wrong client secret") {
		t.Errorf("a wrong secret:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, "not-the-secret-42") {
		t.Errorf("the secret was shown:\n%s", r)
	}

	u.write("crm-key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	r = u.wield("validate", "wield.yaml")
	if r.code == 0 || !strings.Contains(r.stdout, `wield.yaml:7:81: mcp server signed: oauth.private_key_file: "crm-key.pem": private key: the PRIVATE KEY PEM block does not parse`) {
		t.Errorf("validate with a key that does not parse:\n%s", r)
	}
}
