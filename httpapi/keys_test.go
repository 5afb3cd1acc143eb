package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeysEndpoints manages keys through the API as an administrator would,
// and attacks it as a key without the keys right and as an administrator
// who tries to grant more than it has.
func TestKeysEndpoints(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	admin, adminID := mustKey(t, file, nil, RightCall, RightApprove, RightKeys)
	reader, _ := mustKey(t, file, nil, RightRead)
	ring, err := NewKeyring(file, ConfigKey(0, "config-secret"))
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)

	// Without the keys right, nothing: not even the list.
	for _, k := range []string{reader, "config-secret"} {
		if status, b := do(t, hs, "GET", "/v1/keys", k, ""); status != 403 || !strings.Contains(string(b), `lacks the \"keys\" right`) {
			t.Errorf("GET /v1/keys without the keys right: %d %s; want 403 naming it", status, b)
		}
		if status, b := do(t, hs, "POST", "/v1/keys", k, `{"name":"x","rights":["call"]}`); status != 403 {
			t.Errorf("POST /v1/keys without the keys right: %d %s; want 403", status, b)
		}
	}
	status, b := do(t, hs, "GET", "/v1/keys", admin, "")
	if status != 200 || strings.Contains(string(b), "sha256") {
		t.Fatalf("GET /v1/keys: %d %s; want 200 and no hash", status, b)
	}
	var list KeyList
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range list.Keys {
		got = append(got, k.ID+" "+k.Source)
	}
	if diff := cmp.Diff([]string{"config-1 config", adminID + " file", list.Keys[2].ID + " file"}, got); diff != "" || !list.Required {
		t.Errorf("keys listed (-want +got):\n%s (required %v)", diff, list.Required)
	}

	// Made, and usable on the next request.
	status, b = do(t, hs, "POST", "/v1/keys", admin, `{"name":"agent","rights":["call"],"toolsets":["math"]}`)
	if status != 201 {
		t.Fatalf("POST /v1/keys: %d %s", status, b)
	}
	var made CreatedKey
	if err := json.Unmarshal(b, &made); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(made.Secret, "wield_") || made.Key.Name != "agent" {
		t.Fatalf("created key = %+v", made)
	}
	status, b = do(t, hs, "GET", "/v1/whoami", made.Secret, "")
	var who WhoAmI
	if err := json.Unmarshal(b, &who); err != nil || status != 200 {
		t.Fatalf("GET /v1/whoami with the new key: %d %s", status, b)
	}
	want := WhoAmI{Required: true, Key: &KeyInfo{ID: made.Key.ID, Name: "agent", Rights: []Right{RightRead, RightCall}, Toolsets: []string{"math"},
		CreatedAt: made.Key.CreatedAt, Source: "file"}, Rights: []Right{RightRead, RightCall}, Toolsets: []string{"math"}}
	if diff := cmp.Diff(want, who); diff != "" {
		t.Errorf("whoami of the new key (-want +got):\n%s", diff)
	}

	refusals := []struct {
		body   string
		status int
		msg    string
	}{
		{`{"name":"wf","rights":["workflow"]}`, 403, `cannot grant the \"workflow\" right`},
		{`{"name":"m","rights":["metrics"]}`, 403, `cannot grant the \"metrics\" right`},
		{`{"name":"agent","rights":["call"]}`, 409, `already named \"agent\"`},
		{`{"rights":["call"]}`, 400, "name is required"},
		{`{"name":"a\u202egnp.exe"}`, 400, "U+202E"},
		{`{"name":"` + strings.Repeat("n", 65) + `"}`, 400, "at most 64"},
		{`{"name":"x","rights":["root"]}`, 400, `rights[0]: unknown right \"root\"`},
		{`{"name":"x","rights":["call","call"]}`, 400, "named twice"},
		{`{"name":"x","toolsets":["nope"]}`, 400, `toolsets[0]: unknown toolset \"nope\": the toolsets are math`},
		{`{"name":"x","rights":["keys"],"toolsets":["math"]}`, 400, "cannot have the \\\"keys\\\" right"},
		{`{"name":"x","Rights":["call"]}`, 400, "Rights"},
	}
	for _, r := range refusals {
		status, b := do(t, hs, "POST", "/v1/keys", admin, r.body)
		if status != r.status || !strings.Contains(string(b), r.msg) {
			t.Errorf("POST /v1/keys %s: %d %s; want %d with %s", r.body, status, b, r.status, r.msg)
		}
	}

	// Revoked by name, refused on the next request.
	if status, b := do(t, hs, "DELETE", "/v1/keys/agent", admin, ""); status != 200 || !strings.Contains(string(b), `"revoked":true`) {
		t.Fatalf("DELETE /v1/keys/agent: %d %s", status, b)
	}
	if status, _ := do(t, hs, "GET", "/v1/whoami", made.Secret, ""); status != 401 {
		t.Errorf("the revoked key: %d; want 401", status)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/"+made.Key.ID, admin, ""); status != 200 {
		t.Errorf("revoking again: %d %s; want 200", status, b)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/config-1", admin, ""); status != 409 || !strings.Contains(string(b), "server.keys") {
		t.Errorf("revoking a configuration key: %d %s; want 409", status, b)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/nobody", admin, ""); status != 404 {
		t.Errorf("revoking an unknown key: %d %s; want 404", status, b)
	}
	// Two keys of one name (a keys file written before CreateKey refused a
	// taken name) are revoked by ID only.
	for _, name := range []string{"twin", "twin-2"} {
		if _, _, err := CreateKey(file, name, RightRead, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := CreateKey(file, "twin", RightRead, nil); !errors.Is(err, ErrKeyNameTaken) {
		t.Errorf("CreateKey with a taken name: %v, want ErrKeyNameTaken", err)
	}
	all, err := ReadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	all[len(all)-1].Name = "twin"
	if err := writeKeys(file, all); err != nil {
		t.Fatal(err)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/twin", admin, ""); status != 409 || !strings.Contains(string(b), "by its ID") {
		t.Errorf("revoking an ambiguous name: %d %s; want 409", status, b)
	}
}

// TestKeysWithoutKeys: a server that asks for no key lists the keys file
// but makes and revokes none, since it would go on answering without keys;
// whoami says what every local client may do.
func TestKeysWithoutKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	_, old := mustKey(t, file, nil, RightCall)
	if err := RevokeKey(file, old); err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	status, b := do(t, hs, "GET", "/v1/keys", "", "")
	if status != 200 || !strings.Contains(string(b), `"required":false`) || !strings.Contains(string(b), old) {
		t.Errorf("GET /v1/keys without keys: %d %s", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/keys", "", `{"name":"first","rights":["call"]}`); status != 409 || !strings.Contains(string(b), "restart wield serve") {
		t.Errorf("POST /v1/keys without keys: %d %s; want 409 saying how", status, b)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/"+old, "", ""); status != 409 {
		t.Errorf("DELETE /v1/keys without keys: %d %s; want 409", status, b)
	}
	status, b = do(t, hs, "GET", "/v1/whoami", "", "")
	var who WhoAmI
	if err := json.Unmarshal(b, &who); err != nil || status != 200 {
		t.Fatalf("whoami: %d %s", status, b)
	}
	if diff := cmp.Diff(WhoAmI{Rights: []Right{RightRead, RightCall, RightApprove, RightMetrics, RightPins}}, who); diff != "" {
		t.Errorf("whoami without keys (-want +got):\n%s", diff)
	}
}

// TestWhoAmIReadOnly: a read key learns that it may not call, which the
// console needs to turn its Try it off.
func TestWhoAmIReadOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	secret, _, err := CreateKey(file, "dash", RightRead, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file, ConfigKey(0, "ops"))
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	for _, tt := range []struct {
		key    string
		rights string
	}{{secret, `"rights":["read"],"toolsets":["math"]`}, {"ops", `"rights":["read","call","approve","metrics","pins"],"source":"config"`}} {
		status, b := do(t, hs, "GET", "/v1/whoami", tt.key, "")
		if status != 200 || !strings.Contains(string(b), tt.rights) {
			t.Errorf("whoami: %d %s; want %s", status, b, tt.rights)
		}
	}
	if status, _ := do(t, hs, "GET", "/v1/whoami", "", ""); status != 401 {
		t.Errorf("whoami without a key: %d; want 401", status)
	}
}

// TestApprovalSaysWhoWaits: a pending approval says whether its caller
// waits on this server, and the approvals of one call are found by its ID.
func TestApprovalSaysWhoWaits(t *testing.T) {
	_, hs, _ := rightsServer(t, nil, Options{})
	wait := callAsync(t, hs, "", "purge", `{"table":"users"}`)
	a := pendingOf(t, hs, "", "purge")
	status, b := do(t, hs, "GET", "/v1/approvals", "", "")
	if status != 200 || !strings.Contains(string(b), `"caller_waits":"here"`) {
		t.Errorf("a pending approval whose caller waits: %d %s; want caller_waits here", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/approvals/"+a.ID, "", ""); status != 200 || !strings.Contains(string(b), `"caller_waits":"here"`) {
		t.Errorf("GET /v1/approvals/{id}: %d %s", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/approve", "", `{"digest":"`+a.Digest+`"}`); status != 200 {
		t.Fatalf("approve: %d %s", status, b)
	}
	if status, _ := wait(); status != 200 {
		t.Fatalf("the call: %d", status)
	}
	status, b = do(t, hs, "GET", "/v1/approvals?call_id="+a.CallID, "", "")
	if status != 200 || !strings.Contains(string(b), a.ID) || strings.Contains(string(b), "caller_waits") {
		t.Errorf("approvals of the call: %d %s; want the decided one, without caller_waits", status, b)
	}
	if status, b := do(t, hs, "GET", "/v1/approvals?call_id=other", "", ""); status != 200 || strings.Contains(string(b), a.ID) {
		t.Errorf("approvals of another call: %d %s; want none", status, b)
	}
}

// TestKeysBounded: the API makes no key past maxActiveKeys not revoked,
// since each request's key is compared with every one of them.
func TestKeysBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	admin, _ := mustKey(t, file, nil, RightKeys)
	keys, err := ReadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxActiveKeys - 1 {
		keys = append(keys, Key{ID: fmt.Sprintf("key_%06d", i), Name: fmt.Sprintf("k%d", i), Hash: HashKey(fmt.Sprint(i)), Right: RightRead})
	}
	if err := writeKeys(file, keys); err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	if status, b := do(t, hs, "POST", "/v1/keys", admin, `{"name":"one-more"}`); status != 409 || !strings.Contains(string(b), "revoke some first") {
		t.Errorf("a key past the bound: %d %s; want 409", status, b)
	}
	if status, b := do(t, hs, "DELETE", "/v1/keys/k7", admin, ""); status != 200 {
		t.Fatalf("revoke: %d %s", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/keys", admin, `{"name":"one-more"}`); status != 201 {
		t.Errorf("a key once one is revoked: %d %s; want 201", status, b)
	}
}

// TestKeysClient: the Go client makes, reads and revokes keys as the
// console does.
func TestKeysClient(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	admin, _ := mustKey(t, file, nil, RightCall, RightKeys)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)
	ctx := t.Context()
	c := NewClient(hs.URL, admin)
	made, err := c.CreateKey(ctx, KeyRequest{Name: "bot", Rights: []Right{RightCall}, Toolsets: []string{"math"}})
	if err != nil {
		t.Fatal(err)
	}
	who, err := NewClient(hs.URL, made.Secret).WhoAmI(ctx)
	if err != nil || who.Key == nil || who.Key.Name != "bot" {
		t.Fatalf("WhoAmI = %+v, %v", who, err)
	}
	list, err := c.Keys(ctx)
	if err != nil || len(list.Keys) != 2 {
		t.Fatalf("Keys = %+v, %v", list, err)
	}
	if k, err := c.RevokeKey(ctx, "bot"); err != nil || !k.Revoked {
		t.Fatalf("RevokeKey = %+v, %v", k, err)
	}
	var apiErr *Error
	if _, err := NewClient(hs.URL, made.Secret).Keys(ctx); !errors.As(err, &apiErr) || apiErr.Code != CodeUnauthorized {
		t.Errorf("Keys with the revoked key: %v; want unauthorized", err)
	}
}

// TestApprovalNamesItsKey: a pending approval names the key that asked by
// its name too, so the person deciding need not look the ID up.
func TestApprovalNamesItsKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	agent, _, err := CreateKey(file, "support-bot", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	reviewer, _ := mustKey(t, file, nil, RightApprove)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	wait := callAsync(t, hs, agent, "purge", `{"table":"users"}`)
	a := pendingOf(t, hs, reviewer, "purge")
	if status, b := do(t, hs, "GET", "/v1/approvals/"+a.ID, reviewer, ""); status != 200 || !strings.Contains(string(b), `"requested_by_name":"support-bot"`) {
		t.Errorf("the approval: %d %s; want the asking key's name", status, b)
	}
	if status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/deny", reviewer, `{"digest":"`+a.Digest+`"}`); status != 200 {
		t.Fatalf("deny: %d %s", status, b)
	}
	wait()
}
