package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysFirstKeyNotice: the first key of a keys file is made while a
// `wield serve` started without keys may be running, and such a server
// goes on answering without keys until it is restarted (it reads the file
// again only when it has keys). `wield keys create` says so for that key,
// and for no later one; a file whose keys were all revoked is without keys
// again.
func TestKeysFirstKeyNotice(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.json")
	create := func(name string) string {
		t.Helper()
		code, out, errs := run(t, "keys", "create", "--keys", keys, "--rights", "call", "--name", name)
		if code != 0 || !strings.HasPrefix(out, "wield_") {
			t.Fatalf("keys create --name %s: exit %d, stdout %q: %s", name, code, out, errs)
		}
		return errs
	}
	const notice = "restart it"
	if errs := create("first"); !strings.Contains(errs, notice) || !strings.Contains(errs, "without keys") {
		t.Errorf("the first key: stderr %q; want it to say that a wield serve started without keys must be restarted", errs)
	}
	if errs := create("second"); strings.Contains(errs, notice) {
		t.Errorf("the second key: stderr %q; want no notice (a server with keys reads the file again)", errs)
	}
	for _, name := range []string{"first", "second"} {
		if code, _, errs := run(t, "keys", "revoke", "--keys", keys, name); code != 0 {
			t.Fatalf("keys revoke %s: exit %d: %s", name, code, errs)
		}
	}
	if errs := create("third"); !strings.Contains(errs, notice) {
		t.Errorf("a key after every other was revoked: stderr %q; want the notice again", errs)
	}
}
