package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"io"
)

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func TestKeyring(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	secret, k, err := CreateKey(file, "ci", RightRead, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ReadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Key{k}, keys); diff != "" {
		t.Errorf("keys file (-want +got)\n%s", diff)
	}
	if keys[0].Hash != HashKey(secret) || keys[0].Hash == secret {
		t.Errorf("the file keeps %q, want the SHA-256 of the secret", keys[0].Hash)
	}
	ring, err := NewKeyring(file, ConfigKey(0, "plain"), ConfigKey(1, "sha256:"+HashKey("hashed")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		secret string
		id     string
	}{
		{secret, k.ID},
		{"plain", "config-1"},
		{"hashed", "config-2"},
		{"sha256:" + HashKey("hashed"), ""},
		{"", ""},
		{secret + "x", ""},
	}
	for _, tt := range tests {
		got, ok := ring.Authenticate(tt.secret)
		id := ""
		if ok {
			id = got.ID
		}
		if id != tt.id {
			t.Errorf("Authenticate(%q) = %q, want %q", tt.secret, id, tt.id)
		}
	}
	if err := RevokeKey(file, k.ID); err != nil {
		t.Fatal(err)
	}
	ring2, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ring2.Authenticate(secret); ok || !ring2.Empty() {
		t.Errorf("a revoked key still authenticates (empty %v)", ring2.Empty())
	}
	if err := RevokeKey(file, "key_nope"); err == nil {
		t.Error("revoking an unknown key succeeded")
	}
	if _, _, err := CreateKey(file, "", "admin", nil); err == nil {
		t.Error("a key with right admin was made")
	}
}

func TestSecretOf(t *testing.T) {
	tests := []struct {
		header, value, want string
	}{
		{"Authorization", "Bearer abc", "abc"},
		{"Authorization", "bearer  abc ", "abc"},
		{"Authorization", "Basic abc", ""},
		{"X-API-Key", "abc", "abc"},
		{"X-Other", "abc", ""},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set(tt.header, tt.value)
		if got := secretOf(r); got != tt.want {
			t.Errorf("%s: %s = %q, want %q", tt.header, tt.value, got, tt.want)
		}
	}
}

// TestKeyringKeyMadeJustNow: a key made by another process (wield keys
// create) right after the server checked the keys file works on the very
// next request, not only once the file's once-a-second check comes round.
func TestKeyringKeyMadeJustNow(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	first, _, err := CreateKey(file, "first", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ring.Authenticate(first); !ok {
		t.Fatal("the first key does not authenticate")
	}
	for i := range 5 {
		secret, k, err := CreateKey(file, fmt.Sprintf("next-%d", i), RightCall, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ring.Authenticate(secret)
		if !ok || got.ID != k.ID {
			t.Fatalf("key %d made just now: Authenticate = %v, %v; want %s", i, got, ok, k.ID)
		}
	}
	if _, ok := ring.Authenticate("wield_nobody"); ok {
		t.Error("a secret no key has authenticates")
	}
}
