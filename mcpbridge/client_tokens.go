package mcpbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/wieldhq/wield/internal/atomicfile"
	"maps"
	"os"
	"sync"

	"golang.org/x/oauth2"
)

// OAuthToken is what a [TokenStore] keeps for one server: the token, and
// what refreshing it needs (the authorization server's token endpoint and
// the client, which dynamic registration may have created).
type OAuthToken struct {
	Token *oauth2.Token `json:"token"`
	// Resource is the URL of the server the token was obtained for; the
	// token is not sent to any other.
	Resource     string `json:"resource"`
	TokenURL     string `json:"token_url,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthStyle is how the client authenticates at TokenURL
	// (oauth2.AuthStyle: 0 detect, 1 in the form, 2 basic).
	AuthStyle int `json:"auth_style,omitempty"`
}

// TokenStore keeps OAuth tokens by server name: [MemTokens] in memory,
// [FileTokens] in a file. Implementations must be safe for concurrent use
// and should keep what they store secret (it holds bearer tokens and may
// hold a client secret).
type TokenStore interface {
	// Token returns the stored token of server, or nil and no error when
	// there is none.
	Token(server string) (*OAuthToken, error)
	// SetToken stores the token of server, replacing any other.
	SetToken(server string, t *OAuthToken) error
}

// MemTokens is a [TokenStore] in memory. The zero value is ready.
type MemTokens struct {
	mu sync.Mutex
	m  map[string]OAuthToken
}

// Token implements [TokenStore].
func (s *MemTokens) Token(server string) (*OAuthToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[server]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SetToken implements [TokenStore].
func (s *MemTokens) SetToken(server string, t *OAuthToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]OAuthToken{}
	}
	s.m[server] = *t
	return nil
}

// FileTokens is a [TokenStore] kept in one JSON file ({"server": token}),
// readable by its owner only (mode 0600), rewritten atomically (a
// temporary file in the same folder, synced, then renamed over the old one)
// on every change, so a crash leaves either the old tokens or the new ones.
// A change is made to what the file holds then, under a lock file beside it
// (PATH.lock), so processes sharing the file keep each other's changes.
type FileTokens struct {
	path string
	mu   sync.Mutex
	m    map[string]OAuthToken
}

// OpenFileTokens reads the tokens kept at path; a missing file is an empty
// store, created on the first change. It returns an error when the file
// cannot be read or is not a token file.
func OpenFileTokens(path string) (*FileTokens, error) {
	f := &FileTokens{path: path, m: map[string]OAuthToken{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("open tokens: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.m); err != nil {
		return nil, fmt.Errorf("open tokens %s: %w", path, err)
	}
	if f.m == nil {
		f.m = map[string]OAuthToken{}
	}
	return f, nil
}

// Path returns the file the tokens are kept in.
func (f *FileTokens) Path() string { return f.path }

// Token implements [TokenStore].
func (f *FileTokens) Token(server string) (*OAuthToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.m[server]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SetToken implements [TokenStore]: it rewrites the file. On a write error
// the store keeps its previous content.
func (f *FileTokens) SetToken(server string, t *OAuthToken) error {
	if err := f.change(func(m map[string]OAuthToken) { m[server] = *t }); err != nil {
		return fmt.Errorf("set token of %s: %w", server, err)
	}
	return nil
}

// DeleteToken forgets the tokens of server, rewriting the file, and
// reports whether there were any.
func (f *FileTokens) DeleteToken(server string) (bool, error) {
	had := false
	err := f.change(func(m map[string]OAuthToken) {
		_, had = m[server]
		delete(m, server)
	})
	if err != nil {
		return false, fmt.Errorf("delete token of %s: %w", server, err)
	}
	return had, nil
}

// tokenReplacer is a [TokenStore] that can replace a server's token only
// while it holds one ([FileTokens], which `wield mcp logout` changes from
// another process).
type tokenReplacer interface {
	replaceToken(server string, t *OAuthToken) (bool, error)
}

// replaceToken stores t as server's token if the file still holds one for
// it, and reports whether it did: a token refreshed by a running server
// does not bring back the tokens a logout removed.
func (f *FileTokens) replaceToken(server string, t *OAuthToken) (bool, error) {
	kept := false
	err := f.change(func(m map[string]OAuthToken) {
		if _, kept = m[server]; kept {
			m[server] = *t
		}
	})
	if err != nil {
		return false, fmt.Errorf("set token of %s: %w", server, err)
	}
	return kept, nil
}

// change applies fn to the tokens as the file holds them now (another
// process, a login beside a running server, may have rewritten it since
// it was read) and writes the result.
func (f *FileTokens) change(fn func(map[string]OAuthToken)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := lockTokens(f.path)
	if err != nil {
		return err
	}
	defer unlock()
	// A file that no longer reads (another program wrote it, a newer
	// wield's fields) is left as it is: writing this store's view over it
	// would drop every other server's tokens it holds.
	now, err := OpenFileTokens(f.path)
	if err != nil {
		return fmt.Errorf("%w; the file is left unchanged", err)
	}
	next := make(map[string]OAuthToken, len(now.m)+1)
	maps.Copy(next, now.m)
	fn(next)
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, append(b, '\n')); err != nil {
		return err
	}
	f.m = next
	return nil
}
