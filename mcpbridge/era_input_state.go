package mcpbridge

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// srvState is what a requestState carries: the approval it waits for, the
// call parked under it (or the call of a tool's own question, parked in
// memory), and what binds it to the request (the tool, the
// digest of the arguments as the client sent them, the caller) and to a
// time (Exp, Unix milliseconds). It travels as "w1." + base64url(JSON) + "." +
// base64url(HMAC-SHA256 over "w1." + the encoded JSON): readable, as the
// revision allows, but any change breaks the signature.
type srvState struct {
	V        int    `json:"v"`
	Approval string `json:"a,omitempty"`
	// Park and Round name, instead of an approval, a call parked in this
	// server's memory and the round of its question (see era_ask.go).
	Park   string `json:"p,omitempty"`
	Round  int    `json:"n,omitempty"`
	Call   string `json:"c"`
	Tool   string `json:"t"`
	Digest string `json:"d"`
	Who    string `json:"w"`
	Exp    int64  `json:"e"`
}

// srvStatePrefix opens every requestState of this format.
const srvStatePrefix = "w1."

// srvStateMax bounds the requestState read: a real one is a few hundred
// bytes.
const srvStateMax = 2048

// MinStateKey is the shortest key [InputRequiredOptions].Key accepts.
const MinStateKey = 32

// srvStateWho is the caller as a state binds it: a digest, so the state
// shows no API key's ID.
func srvStateWho(who string) string {
	sum := sha256.Sum256([]byte("wield requestState caller\x00" + who))
	return hex.EncodeToString(sum[:16])
}

func srvStateMAC(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// seal encodes and signs the state with key.
func (st srvState) seal(key []byte) string {
	b, _ := json.Marshal(st) // strings and numbers: cannot fail
	signed := srvStatePrefix + base64.RawURLEncoding.EncodeToString(b)
	return signed + "." + base64.RawURLEncoding.EncodeToString(srvStateMAC(key, signed))
}

// srvStateRead checks and decodes a requestState: signed with key, of this
// format, complete, and not expired at now. Its errors say what was wrong,
// for the client, and never echo the state.
func srvStateRead(key []byte, s string, now time.Time) (srvState, error) {
	var st srvState
	if len(key) < MinStateKey {
		return st, errors.New("this server has no key to check it with")
	}
	if len(s) > srvStateMax {
		return st, fmt.Errorf("it is %d bytes, longer than any this server issues", len(s))
	}
	if !strings.HasPrefix(s, srvStatePrefix) {
		return st, errors.New("it is not one this server issued (unknown format)")
	}
	body, sig, ok := strings.Cut(s[len(srvStatePrefix):], ".")
	if !ok {
		return st, errors.New("it is not one this server issued (no signature)")
	}
	mac, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(mac, srvStateMAC(key, srvStatePrefix+body)) {
		return st, errors.New("its signature does not match: it was changed, or issued by a server with another key")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil {
		return st, errors.New("it is not one this server issued (bad encoding)")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&st); err != nil || st.V != 1 || (st.Approval == "") == (st.Park == "") || (st.Park != "") != (st.Round > 0) || st.Call == "" || st.Tool == "" || st.Digest == "" || st.Who == "" || st.Exp == 0 {
		return srvState{}, errors.New("it is not one this server issued (incomplete)")
	}
	if exp := time.UnixMilli(st.Exp); !now.Before(exp) {
		return srvState{}, fmt.Errorf("it expired at %s: call the tool again", exp.UTC().Format(time.RFC3339))
	}
	return st, nil
}

// LoadStateKey reads the key that signs requestStates from path, creating it
// (32 random bytes, mode 0600, its folder 0700) when it does not exist, so
// that states survive a restart. Servers that should accept each other's
// states (behind one load balancer) are given the same file.
func LoadStateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) < MinStateKey {
			return nil, fmt.Errorf("state key %s: %d bytes, at least %d needed (remove it to have a new one made)", path, len(b), MinStateKey)
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("state key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	key := make([]byte, MinStateKey)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	// Written aside and linked in place: a server starting beside this one
	// reads either no key or the whole key, and both keep the same one.
	f, err := os.CreateTemp(filepath.Dir(path), ".state-key-*")
	if err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("state key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("state key: %w", err)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadStateKey(path) // another server made it first
		}
		return nil, fmt.Errorf("state key: %w", err)
	}
	return key, nil
}
