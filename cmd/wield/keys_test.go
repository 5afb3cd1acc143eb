package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysNames: `wield keys create --name` refuses a name a key not
// revoked has (exit 2, naming that key), as POST /v1/keys does, and `wield
// keys revoke` takes a key's name as DELETE /v1/keys/{id} does.
func TestKeysNames(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.json")
	create := func(name string) (int, string, string) {
		return run(t, "keys", "create", "--keys", keys, "--rights", "call", "--name", name)
	}
	if code, _, errs := create("agent"); code != 0 {
		t.Fatalf("keys create --name agent: exit %d: %s", code, errs)
	}
	code, out, errs := create("agent")
	if code != 2 || out != "" || !strings.Contains(errs, `already named "agent"`) {
		t.Errorf("a second key named agent: exit %d, stdout %q, stderr %q; want exit 2 saying the name is taken", code, out, errs)
	}
	if code, _, errs := run(t, "keys", "revoke", "--keys", keys, "agent"); code != 0 || !strings.Contains(errs, "revoked key key_") {
		t.Fatalf("keys revoke agent: exit %d: %s", code, errs)
	}
	// Revoked, the name is free again; a name no key has is a usage error.
	if code, _, errs := create("agent"); code != 0 {
		t.Errorf("a key named agent after the first was revoked: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "keys", "revoke", "--keys", keys, "nobody"); code != 2 || !strings.Contains(errs, `"nobody"`) {
		t.Errorf("keys revoke nobody: exit %d: %s", code, errs)
	}
	_, out, _ = run(t, "keys", "list", "--keys", keys)
	if strings.Count(out, "active") != 1 || strings.Count(out, "revoked") != 1 {
		t.Errorf("keys list after revoking agent and making it again:\n%s", out)
	}
}
