package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/atomicfile"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Right is one thing a key may do. Every key reads; the other rights are
// granted one by one and none implies another: a key that calls tools does
// not decide their approvals, so a model holding it cannot approve its own
// calls.
type Right string

// The rights.
const (
	// RightRead lists and describes tools, reads calls, statistics,
	// approvals, artifacts and events, and parses text. Every key has it.
	RightRead Right = "read"
	// RightCall calls tools (REST and MCP) and writes artifacts.
	RightCall Right = "call"
	// RightApprove decides approvals: approves or denies the calls of
	// confirm tools. The key that asked for a call is refused the decision
	// on it unless the server allows self-approval (Options.SelfApproval).
	RightApprove Right = "approve"
	// RightMetrics reads /metrics, whose series cover every tool: an
	// operator's right, which a key scoped to toolsets cannot have.
	RightMetrics Right = "metrics"
	// RightWorkflow lets calls claim caller.type workflow_node, which
	// bypasses the concurrency limits: meant for trusted workflow engines.
	RightWorkflow Right = "workflow"
	// RightKeys manages the API keys through the API (GET and POST
	// /v1/keys, DELETE /v1/keys/{id}): an administrator's right. A key
	// grants no right it lacks itself, and one scoped to toolsets cannot
	// have it, since the keys reach every tool.
	RightKeys Right = "keys"
	// RightPins accepts the changed definition of a held MCP tool (POST
	// /v1/pins/{name}/accept), which makes it callable: an operator's
	// right, apart from call so that a model cannot accept what it calls.
	RightPins Right = "pins"
)

// Rights are every right, in the order help and listings show them.
var Rights = []Right{RightRead, RightCall, RightApprove, RightMetrics, RightWorkflow, RightKeys, RightPins}

// ParseRights reads a list of rights as `wield keys create --rights` takes
// it: names separated by commas ("call,approve"). Unknown, empty or
// repeated names are errors.
func ParseRights(list string) ([]Right, error) {
	var out []Right
	for name := range strings.SplitSeq(list, ",") {
		r := Right(strings.TrimSpace(name))
		switch {
		case r == "":
			return nil, fmt.Errorf("rights %q: an empty name; list rights separated by commas, e.g. call,approve", list)
		case !slices.Contains(Rights, r):
			return nil, fmt.Errorf("rights %q: unknown right %q; the rights are %s", list, r, rightNames())
		case slices.Contains(out, r):
			return nil, fmt.Errorf("rights %q: %q is named twice", list, r)
		}
		out = append(out, r)
	}
	return out, nil
}

// rightNames lists the rights for error messages.
func rightNames() string {
	names := make([]string, len(Rights))
	for i, r := range Rights {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// Key is an API key as the server keeps it: only the SHA-256 of the secret,
// never the secret itself. A key reaches the tools of its Toolsets only (all
// tools when empty): listing hides the others and calling them is refused.
type Key struct {
	ID       string   `json:"id"`
	Name     string   `json:"name,omitempty"`
	Hash     string   `json:"sha256"` // hex of the SHA-256 of the secret
	Toolsets []string `json:"toolsets,omitempty"`
	// Right is read or call, as keys files held it before rights were a
	// list; call here grants the call right and nothing more (not approve).
	Right Right `json:"right"`
	// Rights are the key's rights besides read (see [Right]).
	Rights    []Right   `json:"rights,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// Scoped reports whether the key is limited to some toolsets.
func (k *Key) Scoped() bool { return len(k.Toolsets) > 0 }

// Has reports whether the key has right r. Every key reads.
func (k *Key) Has(r Right) bool {
	return r == RightRead || slices.Contains(k.Rights, r) || (r == RightCall && k.Right == RightCall)
}

// Granted lists the key's rights, read first, in the order of [Rights].
func (k *Key) Granted() []Right {
	var out []Right
	for _, r := range Rights {
		if k.Has(r) {
			out = append(out, r)
		}
	}
	return out
}

// HashKey returns the hex SHA-256 of a secret, as keys are stored.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// ConfigKey makes the key of a `server.keys` entry of the configuration:
// either the secret itself or "sha256:" and its hash, so that a
// configuration file need not hold secrets. Such keys are the operator's:
// they reach every tool and have every right but workflow (claiming the
// workflow bypass of the concurrency limits takes a key made with that
// right) and keys (a key in a configuration file often ends up in an
// agent's hands; managing keys takes a key made with that right).
func ConfigKey(i int, entry string) Key {
	h, ok := strings.CutPrefix(entry, "sha256:")
	if !ok {
		h = HashKey(entry)
	}
	return Key{ID: fmt.Sprintf("config-%d", i+1), Hash: strings.ToLower(h), Right: RightCall,
		Rights: []Right{RightCall, RightApprove, RightMetrics, RightPins}}
}

// Keyring answers whether a presented secret is a valid key. It holds keys
// given to it and, optionally, those of a keys file (see [CreateKey]),
// which it reads again when the file changes: checked at most once a second,
// so a revocation takes effect on a running server within a second, and at
// once for a secret that matches no key, so a key made while the server runs
// works from the next request. The zero Keyring is not usable; use
// [NewKeyring].
type Keyring struct {
	static []Key
	path   string

	mu      sync.Mutex
	file    []Key
	read    os.FileInfo // the keys file as last read; nil when missing
	checked time.Time
}

// NewKeyring returns a keyring of keys and of the keys file at path (none
// when path is empty). A missing file holds no keys; an unreadable one is an
// error.
func NewKeyring(path string, keys ...Key) (*Keyring, error) {
	k := &Keyring{static: slices.Clone(keys), path: path}
	if path != "" {
		if err := k.reload(true); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Empty reports whether the keyring holds no usable key, in which case the
// server asks for none.
func (k *Keyring) Empty() bool {
	if k == nil {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, x := range append(slices.Clip(k.static), k.file...) {
		if !x.Revoked {
			return false
		}
	}
	return true
}

// Authenticate returns the key whose secret is given. Every key's hash is
// compared in constant time, so the answer's timing says nothing about
// which key came close.
func (k *Keyring) Authenticate(secret string) (*Key, bool) {
	if secret == "" {
		return nil, false
	}
	if k.path != "" {
		_ = k.reload(false) // a file that became unreadable keeps the keys last read
	}
	found := k.find(secret)
	if found == nil && k.path != "" {
		// A key made a moment ago (wield keys create, then a request at
		// once) is in a file the throttled check above may not have looked
		// at: a secret no key has looks again, at the file's metadata only
		// unless it changed.
		if changed, _ := k.reloadChanged(); changed {
			found = k.find(secret)
		}
	}
	return found, found != nil
}

// find returns the key, not revoked, whose secret is given, or nil.
func (k *Keyring) find(secret string) *Key {
	sum := sha256.Sum256([]byte(secret))
	k.mu.Lock()
	keys := append(slices.Clip(k.static), k.file...)
	k.mu.Unlock()
	var found *Key
	for i := range keys {
		want, err := hex.DecodeString(keys[i].Hash)
		if err != nil || len(want) != len(sum) {
			continue
		}
		if subtle.ConstantTimeCompare(want, sum[:]) == 1 && !keys[i].Revoked && found == nil {
			found = &keys[i]
		}
	}
	return found
}

// reload reads the keys file when it changed since the last read (or when
// force is set), at most once a second otherwise.
func (k *Keyring) reload(force bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !force && time.Since(k.checked) < time.Second {
		return nil
	}
	_, err := k.readLocked(force)
	return err
}

// reloadChanged reads the keys file if it changed since the last read,
// whenever the last check was, and reports whether it did.
func (k *Keyring) reloadChanged() (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.readLocked(false)
}

// readLocked reads the keys file when force is set or it is another file
// than the one last read (replaced: the keys file is written by renaming a
// new one over it), or its size or time changed. k.mu is held.
func (k *Keyring) readLocked(force bool) (bool, error) {
	k.checked = time.Now()
	st, err := os.Stat(k.path)
	if errors.Is(err, fs.ErrNotExist) {
		changed := k.read != nil
		k.file, k.read = nil, nil
		return changed, nil
	}
	if err != nil {
		return false, fmt.Errorf("read keys file %s: %w", k.path, err)
	}
	if !force && k.read != nil && os.SameFile(k.read, st) && st.Size() == k.read.Size() && st.ModTime().Equal(k.read.ModTime()) {
		return false, nil
	}
	keys, err := ReadKeys(k.path)
	if err != nil {
		return false, err
	}
	k.file, k.read = keys, st
	return true, nil
}

// keysFile is the JSON form of a keys file.
type keysFile struct {
	Keys []Key `json:"keys"`
}

// ReadKeys reads the keys of a keys file; a missing file holds none.
func ReadKeys(path string) ([]Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read keys file %s: %w", path, err)
	}
	var f keysFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("read keys file %s: %w", path, err)
	}
	return f.Keys, nil
}

// writeKeys replaces the keys file atomically, readable by its owner only.
func writeKeys(path string, keys []Key) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write keys file %s: %w", path, err)
	}
	b, err := json.MarshalIndent(keysFile{Keys: keys}, "", "  ")
	if err != nil {
		return fmt.Errorf("write keys file %s: %w", path, err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write keys file %s: %w", path, err)
	}
	return nil
}

// ErrKeyNameTaken is what [CreateKey] fails with for a name that a key not
// revoked has.
var ErrKeyNameTaken = errors.New("the name is taken")

// keysMu serialises changes to keys files made by this process.
var keysMu sync.Mutex

// CreateKey makes a new key with right and the more rights (read is
// implied; see [Right]) on the tools of toolsets (every tool when empty),
// adds its hash to the keys file at path, and returns the secret, which is
// shown once and kept nowhere. A key scoped to toolsets cannot have the
// metrics right, whose series cover every tool. A name, when given, must be
// one no key of the file that is not revoked has (an error wrapping
// [ErrKeyNameTaken]), as the API's POST /v1/keys requires, so that a key
// can be revoked by its name.
func CreateKey(path, name string, right Right, toolsets []string, more ...Right) (secret string, key Key, err error) {
	base, extra := RightRead, []Right(nil)
	for _, r := range append([]Right{right}, more...) {
		switch {
		case !slices.Contains(Rights, r):
			return "", Key{}, fmt.Errorf("create key: unknown right %q; the rights are %s", r, rightNames())
		case r == RightMetrics && len(toolsets) > 0:
			return "", Key{}, errors.New("create key: the metrics right shows the figures of every tool; a key scoped to toolsets cannot have it")
		case r == RightKeys && len(toolsets) > 0:
			return "", Key{}, errors.New("create key: the keys right manages keys that reach every tool; a key scoped to toolsets cannot have it")
		case r == RightCall:
			base = RightCall
		}
		if r != RightRead && !slices.Contains(extra, r) {
			extra = append(extra, r)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
	}
	secret = "wield_" + base64.RawURLEncoding.EncodeToString(raw[:])
	key = Key{ID: "key_" + hex.EncodeToString(id[:]), Name: name, Hash: HashKey(secret),
		Toolsets: slices.Clone(toolsets), Right: base, Rights: extra, CreatedAt: time.Now().UTC().Truncate(time.Second)}
	keysMu.Lock()
	defer keysMu.Unlock()
	keys, err := ReadKeys(path)
	if err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
	}
	if name != "" {
		for _, k := range keys {
			if k.Name == name && !k.Revoked {
				return "", Key{}, fmt.Errorf("create key: key %s is already named %q: choose another name, or revoke it first: %w", k.ID, name, ErrKeyNameTaken)
			}
		}
	}
	if err := writeKeys(path, append(keys, key)); err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
	}
	return secret, key, nil
}

// RevokeKey marks the key with the ID as revoked in the keys file; it fails
// with an error wrapping fs.ErrNotExist for an unknown ID.
func RevokeKey(path, id string) error {
	keysMu.Lock()
	defer keysMu.Unlock()
	keys, err := ReadKeys(path)
	if err != nil {
		return fmt.Errorf("revoke key %s: %w", id, err)
	}
	i := slices.IndexFunc(keys, func(k Key) bool { return k.ID == id })
	if i < 0 {
		return fmt.Errorf("revoke key %s: %w", id, fs.ErrNotExist)
	}
	keys[i].Revoked = true
	if err := writeKeys(path, keys); err != nil {
		return fmt.Errorf("revoke key %s: %w", id, err)
	}
	return nil
}

// missingRight is the refusal of a request that needs a right the key
// lacks; it names the right and how to get a key with it.
func missingRight(r Right) error {
	return apiError(http.StatusForbidden, CodeForbidden, fmt.Sprintf("this key lacks the %q right: make a key with it (wield keys create --rights %s)", r, r))
}

// mayBypass answers whether a request may claim caller.type workflow_node,
// which bypasses the concurrency limits: with keys, a key with the
// workflow right may; without, only a server told so
// (Options.AllowWorkflowBypass). The refusal says which.
func (s *Server) mayBypass(r *http.Request) error {
	if k := KeyFrom(r.Context()); k != nil {
		if k.Has(RightWorkflow) {
			return nil
		}
		return apiError(http.StatusForbidden, CodeForbidden, fmt.Sprintf("caller.type workflow_node bypasses the concurrency limits: this key lacks the %q right (wield keys create --rights call,%s)", RightWorkflow, RightWorkflow))
	}
	if s.keys == nil && s.bypass {
		return nil
	}
	return apiError(http.StatusForbidden, CodeForbidden, "caller.type workflow_node bypasses the concurrency limits: this server takes it from no request (set server.allow_workflow_bypass: true in the configuration to let local clients claim it)")
}

// requester is how approvals name the key that asked for a call.
func requester(k *Key) string { return "key:" + k.ID }

type keyCtx struct{}

// KeyFrom returns the key a request was authenticated with, or nil on a
// server without keys. A handler mounted beside the API (the MCP endpoint)
// uses it to narrow what it offers.
func KeyFrom(ctx context.Context) *Key {
	k, _ := ctx.Value(keyCtx{}).(*Key)
	return k
}

// secretOf reads the key a request presents: "Authorization: Bearer KEY" or
// "X-API-Key: KEY".
func secretOf(r *http.Request) string {
	if v := r.Header.Get("Authorization"); v != "" {
		scheme, token, ok := strings.Cut(v, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
		return ""
	}
	return r.Header.Get("X-API-Key")
}
