package mcpbridge_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// A service imports the tools of a server behind OAuth with its own
// credentials (the client credentials grant), keeping nothing on disk.
func ExampleImporter_AddOAuth() {
	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, nil)
	defer im.Close()
	err := im.AddOAuth(context.Background(),
		mcpbridge.ServerConfig{Name: "crm", URL: "https://crm.example.com/mcp", Enabled: true},
		&mcpbridge.OAuthConfig{ClientCredentials: true, ClientID: "wield", ClientSecret: os.Getenv("CRM_CLIENT_SECRET")})
	if err != nil {
		log.Print(err) // retried in the background when it wraps ErrUnavailable
	}
}

// A person approves once, in a browser; the token is kept in a file for
// the next start.
func ExampleOAuthConfig_authorizationCode() {
	tokens, err := mcpbridge.OpenFileTokens("mcp-tokens.json")
	if err != nil {
		log.Fatal(err)
	}
	_ = &mcpbridge.OAuthConfig{
		RedirectURL: "http://127.0.0.1:8765/callback",
		Authorize: func(ctx context.Context, authURL string) (*mcpbridge.OAuthRedirect, error) {
			fmt.Println("open", authURL, "then paste the address you land on:")
			var landed string
			if _, err := fmt.Scanln(&landed); err != nil {
				return nil, err
			}
			return mcpbridge.ParseOAuthRedirect(landed)
		},
		Tokens: tokens,
	}
}

func ExampleParseOAuthRedirect() {
	r, err := mcpbridge.ParseOAuthRedirect("http://127.0.0.1:8765/callback?code=xyz&state=abc")
	fmt.Println(r.Code, r.State, err)
	_, err = mcpbridge.ParseOAuthRedirect("http://127.0.0.1:8765/callback?error=access_denied")
	fmt.Println(err)
	// Output:
	// xyz abc <nil>
	// parse oauth redirect: the authorization server refused: access_denied
}

func ExampleElicitDefaults() {
	res, _ := mcpbridge.ElicitDefaults(context.Background(), "crm", &mcp.ElicitParams{
		Message: "Confirm the region",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"region": map[string]any{"type": "string", "default": "eu-west-1"}}},
	})
	fmt.Println(res.Action, res.Content)
	// Output: accept map[region:eu-west-1]
}
