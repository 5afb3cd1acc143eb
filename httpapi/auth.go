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

// Right is what a key may do. A key with RightCall may also read.
type Right string

// The rights.
const (
	// RightRead lists and describes tools, reads calls, statistics,
	// approvals, artifacts and events, and parses text.
	RightRead Right = "read"
	// RightCall also calls tools, decides approvals and writes artifacts.
	RightCall Right = "call"
)

// allows reports whether a key with right r may do what needs want.
func (r Right) allows(want Right) bool { return want == RightRead || r == RightCall }

// Key is an API key as the server keeps it: only the SHA-256 of the secret,
// never the secret itself. A key reaches the tools of its Toolsets only (all
// tools when empty): listing hides the others and calling them is refused.
type Key struct {
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	Hash      string    `json:"sha256"` // hex of the SHA-256 of the secret
	Toolsets  []string  `json:"toolsets,omitempty"`
	Right     Right     `json:"right"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	Revoked   bool      `json:"revoked,omitempty"`
}

// Scoped reports whether the key is limited to some toolsets.
func (k *Key) Scoped() bool { return len(k.Toolsets) > 0 }

// HashKey returns the hex SHA-256 of a secret, as keys are stored.
func HashKey(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// ConfigKey makes the key of a `server.keys` entry of the configuration:
// either the secret itself or "sha256:" and its hash, so that a
// configuration file need not hold secrets. Such keys have every right on
// every tool.
func ConfigKey(i int, entry string) Key {
	h, ok := strings.CutPrefix(entry, "sha256:")
	if !ok {
		h = HashKey(entry)
	}
	return Key{ID: fmt.Sprintf("config-%d", i+1), Hash: strings.ToLower(h), Right: RightCall}
}

// Keyring answers whether a presented secret is a valid key. It holds keys
// given to it and, optionally, those of a keys file (see [CreateKey]),
// which it reads again when the file changes, at most once a second, so a
// revocation takes effect on a running server. The zero Keyring is not
// usable; use [NewKeyring].
type Keyring struct {
	static []Key
	path   string

	mu      sync.Mutex
	file    []Key
	mod     time.Time
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
	return found, found != nil
}

// reload reads the keys file when it changed since the last read (or when
// force is set), at most once a second otherwise.
func (k *Keyring) reload(force bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	if !force && now.Sub(k.checked) < time.Second {
		return nil
	}
	k.checked = now
	st, err := os.Stat(k.path)
	if errors.Is(err, fs.ErrNotExist) {
		k.file, k.mod = nil, time.Time{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read keys file %s: %w", k.path, err)
	}
	if !force && st.ModTime().Equal(k.mod) {
		return nil
	}
	keys, err := ReadKeys(k.path)
	if err != nil {
		return err
	}
	k.file, k.mod = keys, st.ModTime()
	return nil
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

// keysMu serialises changes to keys files made by this process.
var keysMu sync.Mutex

// CreateKey makes a new key with the right and toolsets, adds its hash to
// the keys file at path, and returns the secret, which is shown once and
// kept nowhere.
func CreateKey(path, name string, right Right, toolsets []string) (secret string, key Key, err error) {
	if right != RightRead && right != RightCall {
		return "", Key{}, fmt.Errorf("create key: right %q is not read or call", right)
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
		Toolsets: slices.Clone(toolsets), Right: right, CreatedAt: time.Now().UTC().Truncate(time.Second)}
	keysMu.Lock()
	defer keysMu.Unlock()
	keys, err := ReadKeys(path)
	if err != nil {
		return "", Key{}, fmt.Errorf("create key: %w", err)
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
