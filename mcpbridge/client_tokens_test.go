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

// TestFileTokensTwoProcesses: two stores of one file (a running server, and
// a login or logout beside it) each change what the file holds now, not
// what it held when they opened it: a server refreshing its token keeps a
// login's new one, and a logout is not undone by the next refresh.
func TestFileTokensTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	server, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := server.SetToken("a", &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "a1"}}); err != nil {
		t.Fatal(err)
	}
	login, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := login.SetToken("b", &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "b1"}}); err != nil {
		t.Fatal(err)
	}
	if had, err := login.DeleteToken("a"); err != nil || !had {
		t.Fatalf("logout of a: %v %v", had, err)
	}
	if had, err := login.DeleteToken("a"); err != nil || had {
		t.Fatalf("a second logout of a: %v %v, want nothing there", had, err)
	}
	// The server refreshes b's token, which it never read.
	if err := server.SetToken("b", &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "b2"}}); err != nil {
		t.Fatal(err)
	}
	now, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := now.Token("a")
	b, _ := now.Token("b")
	if a != nil || b == nil || b.Token.AccessToken != "b2" {
		t.Errorf("the file holds a=%v b=%v, want no a (logged out) and b2", a, b)
	}
}

// A token file that no longer reads when a change is made (another program
// wrote it) is an error, the file left as it is, not overwritten with the
// store's older view of it, which would drop what else it holds.
func TestFileTokensChangeOfUnreadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	f, err := mcpbridge.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetToken("a", &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "a1"}}); err != nil {
		t.Fatal(err)
	}
	other := `{"a": {"token": {"access_token": "a1"}, "resource": "", "scope_of_a_newer_wield": 1}, "b": {"token": {"access_token": "b1"}, "resource": ""}}`
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	err = f.SetToken("a", &mcpbridge.OAuthToken{Token: &oauth2.Token{AccessToken: "a2"}})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "left unchanged") {
		t.Errorf("SetToken over an unreadable file = %v, want an error naming %s, the file left unchanged", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != other {
		t.Errorf("the file was rewritten:\n%s", b)
	}
}
