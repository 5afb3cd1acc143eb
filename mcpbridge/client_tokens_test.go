package mcpbridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/mcpbridge"
	"golang.org/x/oauth2"
)

func TestMemTokens(t *testing.T) {
	var s mcpbridge.MemTokens
	if tok, err := s.Token("x"); tok != nil || err != nil {
		t.Fatalf("Token of an empty store = %v, %v; want nil, nil", tok, err)
	}
	want := &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "a"}, TokenURL: "http://127.0.0.1/token"}
	if err := s.SetToken("x", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Token("x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(oauth2.Token{})); diff != "" {
		t.Errorf("Token (-want +got):\n%s", diff)
	}
}

// Tokens kept in a file are there after a restart, for the owner only.
func TestFileTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	f, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := f.Token("a"); tok != nil || err != nil {
		t.Fatalf("Token of a new store = %v, %v; want nil, nil", tok, err)
	}
	expiry := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	want := map[string]*mcpbridge.OAuthToken{
		"a": {Token: &oauth2.Token{AccessToken: "at", TokenType: "Bearer", RefreshToken: "rt", Expiry: expiry},
			TokenURL: "http://127.0.0.1/token", ClientID: "c", ClientSecret: "s", AuthStyle: 2},
		"b": {Token: &oauth2.Token{AccessToken: "bt"}},
	}
	for k, v := range want {
		if err := f.SetToken(k, v); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	again, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcpbridge.OAuthToken{}
	for k := range want {
		if got[k], err = again.Token(k); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(oauth2.Token{})); diff != "" {
		t.Errorf("tokens after reopening (-want +got):\n%s", diff)
	}
}

func TestOpenFileTokensRefusesOtherFiles(t *testing.T) {
	for _, content := range []string{`{"a": {"token": {}, "extra": 1}}`, `[1]`, `{`} {
		path := filepath.Join(t.TempDir(), "tokens.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := mcpbridge.OpenFileTokens(path); err == nil || !strings.Contains(err.Error(), "open tokens") {
			t.Errorf("OpenFileTokens of %s = %v, want an error", content, err)
		}
	}
	if _, err := mcpbridge.OpenFileTokens(filepath.Join(t.TempDir(), "none.json")); err != nil {
		t.Errorf("OpenFileTokens of a missing file: %v", err)
	}
}
