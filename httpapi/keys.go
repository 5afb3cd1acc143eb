package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// The API's key management (GET and POST /v1/keys, DELETE /v1/keys/{id})
// works on the keys file the server's [Keyring] reads, the one `wield keys`
// manages, under [RightKeys]. A key grants no right it lacks itself, so an
// administrator's key without workflow cannot mint one that has it. Keys of
// the configuration (server.keys) are listed but changed only there. A
// server without keys lists the keys file but neither creates nor revokes:
// it would go on answering without keys until restarted, which a person
// who just made their first key would not expect (see [Server.createKey]).

// KeyInfo is a key as the API shows it: never its secret, nor the hash of
// it.
type KeyInfo struct {
	ID     string  `json:"id"`
	Name   string  `json:"name,omitempty"`
	Rights []Right `json:"rights"`
	// Toolsets scope the key; empty means every tool.
	Toolsets  []string  `json:"toolsets,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	Revoked   bool      `json:"revoked,omitempty"`
	// Source is where the key is kept: "file" for the keys file (wield
	// keys, these endpoints), "config" for server.keys of the
	// configuration, which only an edit of the configuration changes.
	Source string `json:"source"`
}

// Key sources of [KeyInfo].
const (
	sourceFile   = "file"
	sourceConfig = "config"
)

func keyInfo(k *Key, source string) KeyInfo {
	return KeyInfo{ID: k.ID, Name: k.Name, Rights: k.Granted(), Toolsets: slices.Clone(k.Toolsets),
		CreatedAt: k.CreatedAt, Revoked: k.Revoked, Source: source}
}

// KeyList is the answer of GET /v1/keys.
type KeyList struct {
	Keys []KeyInfo `json:"keys"`
	// Required says whether the server asks for keys. A server without
	// keys lists the keys file but neither creates nor revokes keys.
	Required bool `json:"required"`
}

// KeyRequest is the body of POST /v1/keys.
type KeyRequest struct {
	// Name tells the key apart; it is required, and unique among the keys
	// not revoked, so that DELETE /v1/keys/{name} names one key.
	Name string `json:"name"`
	// Rights are granted besides read, which every key has.
	Rights []Right `json:"rights,omitempty"`
	// Toolsets scope the key (every tool when empty).
	Toolsets []string `json:"toolsets,omitempty"`
}

// CreatedKey is the answer of POST /v1/keys: the key, and its secret,
// which is shown this once and kept nowhere.
type CreatedKey struct {
	Key    KeyInfo `json:"key"`
	Secret string  `json:"secret"`
}

// maxKeyName bounds a key's name: it is shown in listings and decisions.
const maxKeyName = 64

// maxActiveKeys bounds the keys not revoked that the API makes: every
// request's key is compared with each of them, so their number is the
// cost of authenticating one request.
const maxActiveKeys = 1000

// keyList lists every key of the keyring: the configuration's, then the
// keys file's, read again (an administrator sees a key `wield keys` made a
// moment ago).
func (k *Keyring) keyList() []KeyInfo {
	out := []KeyInfo{}
	if k == nil {
		return out
	}
	if k.path != "" {
		_ = k.reload(true) // a file that became unreadable keeps the keys last read
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := range k.static {
		out = append(out, keyInfo(&k.static[i], sourceConfig))
	}
	for i := range k.file {
		out = append(out, keyInfo(&k.file[i], sourceFile))
	}
	return out
}

// nameOf is the name of the key with the ID, as last read ("" when the
// key is unknown or has none).
func (k *Keyring) nameOf(id string) string {
	if k == nil {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, list := range [][]Key{k.static, k.file} {
		for i := range list {
			if list[i].ID == id {
				return list[i].Name
			}
		}
	}
	return ""
}

// create makes a key in the keys file and reads the file again at once, so
// the key works on its first request rather than after the second the
// keyring otherwise waits between reads.
func (k *Keyring) create(name string, rights []Right, toolsets []string) (string, Key, error) {
	base := RightRead
	if len(rights) > 0 {
		base, rights = rights[0], rights[1:]
	}
	secret, key, err := CreateKey(k.path, name, base, toolsets, rights...)
	if err != nil {
		return "", Key{}, err
	}
	return secret, key, k.reload(true)
}

// revoke revokes a key of the keys file and reads the file again at once:
// the revocation holds from the next request.
func (k *Keyring) revoke(id string) error {
	if err := RevokeKey(k.path, id); err != nil {
		return err
	}
	return k.reload(true)
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, KeyList{Keys: s.keyring.keyList(), Required: s.keys != nil})
	return nil
}

// keysManaged refuses a change of keys the server cannot make or would not
// honour: without a keys file, or without keys (it answers without them
// until restarted).
func (s *Server) keysManaged() error {
	switch {
	case s.keys == nil:
		return apiError(http.StatusConflict, CodeConflict, "this server runs without API keys and would go on answering without them: make the first key with 'wield keys create --name admin --rights call,approve,metrics,keys' and restart wield serve, which then asks for keys")
	case s.keyring.path == "":
		return apiError(http.StatusConflict, CodeConflict, "this server has no keys file: its keys are those of its configuration (server.keys), changed there")
	}
	return nil
}

// createKey answers POST /v1/keys. The new key's rights must be the
// requesting key's own (a key grants no right it lacks); its toolsets must
// exist; its name is required and unique among keys not revoked.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.keysManaged(); err != nil {
		return err
	}
	var req KeyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := checkKeyName(req.Name); err != nil {
		return err
	}
	var rights []Right
	for i, rt := range req.Rights {
		switch {
		case !slices.Contains(Rights, rt):
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("rights[%d]: unknown right %q; the rights are %s", i, rt, rightNames()))
		case slices.Contains(rights, rt):
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("rights[%d]: %q is named twice", i, rt))
		}
		rights = append(rights, rt)
	}
	me := KeyFrom(r.Context())
	for _, rt := range rights {
		if me != nil && !me.Has(rt) {
			return apiError(http.StatusForbidden, CodeForbidden, fmt.Sprintf("this key cannot grant the %q right, which it does not have itself", rt))
		}
		if len(req.Toolsets) > 0 && (rt == RightMetrics || rt == RightKeys) {
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("rights: a key scoped to toolsets cannot have the %q right, which reaches every tool", rt))
		}
	}
	for i, ts := range req.Toolsets {
		if _, ok := s.reg.Toolset(ts); !ok {
			var names []string
			for _, t := range s.reg.Toolsets() {
				names = append(names, t.Name)
			}
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("toolsets[%d]: %v", i, &ChoiceError{Kind: "toolset", Name: ts, Choices: names}))
		}
		if slices.Contains(req.Toolsets[:i], ts) {
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("toolsets[%d]: %q is named twice", i, ts))
		}
	}
	keysAdmin.Lock() // the name is checked and taken at once
	defer keysAdmin.Unlock()
	active := 0
	for _, k := range s.keyring.keyList() {
		if k.Revoked {
			continue
		}
		active++
		if k.Name == req.Name {
			return apiError(http.StatusConflict, CodeConflict, fmt.Sprintf("name: key %s is already named %q; choose another name, or revoke it first", k.ID, req.Name))
		}
	}
	if active >= maxActiveKeys {
		return apiError(http.StatusConflict, CodeConflict, fmt.Sprintf("this server has %d keys not revoked, the most the API makes: revoke some first", active))
	}
	secret, key, err := s.keyring.create(req.Name, rights, req.Toolsets)
	if err != nil {
		return err
	}
	s.log.Info("API key created", "key_id", key.ID, "name", key.Name, "rights", key.Granted(), "by", decider(r))
	writeJSON(w, http.StatusCreated, CreatedKey{Key: keyInfo(&key, sourceFile), Secret: secret})
	return nil
}

// checkKeyName refuses a name that is empty, too long, or holds characters
// that would not read as themselves in a listing.
func checkKeyName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return apiError(http.StatusBadRequest, CodeBadRequest, "name is required: a name to tell the key apart, e.g. \"reviewer\"")
	case len(name) > maxKeyName:
		return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("name is %d bytes long; at most %d", len(name), maxKeyName))
	case strings.TrimSpace(name) != name:
		return apiError(http.StatusBadRequest, CodeBadRequest, "name begins or ends with spaces")
	}
	for i, c := range name {
		if !unicode.IsPrint(c) || unicode.Is(unicode.Bidi_Control, c) {
			return apiError(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("name holds the character %U at byte %d: use letters, digits, spaces and punctuation", c, i))
		}
	}
	return nil
}

// revokeKey answers DELETE /v1/keys/{id}: {id} is a key's ID, or the name
// of exactly one key not revoked. Revoking a revoked key answers it again;
// a key of the configuration is refused (409).
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.keysManaged(); err != nil {
		return err
	}
	keysAdmin.Lock()
	defer keysAdmin.Unlock()
	ref := r.PathValue("id")
	list := s.keyring.keyList()
	i := slices.IndexFunc(list, func(k KeyInfo) bool { return k.ID == ref })
	if i < 0 {
		var named []string
		for j, k := range list {
			if k.Name == ref && !k.Revoked {
				named, i = append(named, k.ID), j
			}
		}
		switch {
		case len(named) == 0:
			return apiError(http.StatusNotFound, CodeNotFound, fmt.Sprintf("no key has the ID or the name %q", ref))
		case len(named) > 1:
			return apiError(http.StatusConflict, CodeConflict, fmt.Sprintf("keys %s are all named %q: revoke one by its ID", strings.Join(named, ", "), ref))
		}
	}
	k := list[i]
	if k.Source == sourceConfig {
		return apiError(http.StatusConflict, CodeConflict, fmt.Sprintf("key %s comes from the configuration (server.keys): remove it there and restart", k.ID))
	}
	if !k.Revoked {
		err := s.keyring.revoke(k.ID)
		if errors.Is(err, fs.ErrNotExist) {
			return apiError(http.StatusNotFound, CodeNotFound, fmt.Sprintf("key %s is no longer in the keys file", k.ID))
		}
		if err != nil {
			return err
		}
		k.Revoked = true
		s.log.Info("API key revoked", "key_id", k.ID, "name", k.Name, "by", decider(r))
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// keysAdmin serialises the API's changes of keys, so that two requests
// cannot both take a name.
var keysAdmin sync.Mutex

// Keys lists the server's API keys (GET /v1/keys; the keys right).
func (c *Client) Keys(ctx context.Context) (*KeyList, error) {
	var out KeyList
	if err := c.Do(ctx, "GET", "/v1/keys", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateKey makes a key on the server (POST /v1/keys; the keys right and
// every right granted); the answer holds its secret, shown this once.
func (c *Client) CreateKey(ctx context.Context, req KeyRequest) (*CreatedKey, error) {
	var out CreatedKey
	if err := c.Do(ctx, "POST", "/v1/keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeKey revokes a key of the server's keys file, named by its ID or by
// the name of exactly one key not revoked (DELETE /v1/keys/{id}).
func (c *Client) RevokeKey(ctx context.Context, id string) (*KeyInfo, error) {
	var out KeyInfo
	if err := c.Do(ctx, "DELETE", "/v1/keys/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
