package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// DefaultSecretNames are the parameter names whose values records never
// keep unless Options.SecretNames says otherwise. A name matches a key equal
// to it or made of it and other words joined by _ - or . ("api_key",
// "github_token", "db.password"), in any case; "max_tokens" does not match
// "token".
var DefaultSecretNames = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "private_key", "client_secret", "access_key"}

// Redacted replaces a secret value in records.
const Redacted = "[REDACTED]"

// redactor knows which keys hold secrets.
type redactor struct {
	names []string // lower case
	tools sync.Map // *wield.Entry → bool: may its arguments hold a secret?
}

func newRedactor(names []string) *redactor {
	r := &redactor{}
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			r.names = append(r.names, n)
		}
	}
	return r
}

func (r *redactor) secret(key string, tool []string) bool {
	for _, t := range tool {
		if key == t {
			return true
		}
	}
	key = strings.ToLower(key)
	for _, n := range r.names {
		if key == n {
			return true
		}
		for _, sep := range []string{"_", "-", "."} {
			if strings.HasSuffix(key, sep+n) || strings.HasPrefix(key, n+sep) || strings.Contains(key, sep+n+sep) {
				return true
			}
		}
	}
	return false
}

// mayHold is a quick look: false means no key of args can be a secret.
func (r *redactor) mayHold(args []byte, tool []string) bool {
	if len(tool) > 0 {
		return true
	}
	lower := bytes.ToLower(args)
	for _, n := range r.names {
		if bytes.Contains(lower, []byte(n)) {
			return true
		}
	}
	return false
}

// redact returns args with the values of secret keys, at any depth,
// replaced by [Redacted]; args itself is not changed. Arguments that are not
// a JSON object come back as they are.
func (r *redactor) redact(args json.RawMessage, tool []string) json.RawMessage {
	if len(args) == 0 || !r.mayHold(args, tool) {
		return args
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return args
	}
	if !r.walk(v, tool) {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return out
}

func (r *redactor) walk(v any, tool []string) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if r.secret(k, tool) {
				v[k] = Redacted
				changed = true
				continue
			}
			changed = r.walk(x, tool) || changed
		}
	case []any:
		for _, x := range v {
			changed = r.walk(x, tool) || changed
		}
	}
	return changed
}

// needed reports whether arguments of the tool can hold a secret: its
// schema names a secret parameter somewhere, or lets arbitrary keys in.
// Most tools' schemas settle it once, and their calls skip redaction.
func (r *redactor) needed(e *wield.Entry) bool {
	if v, ok := r.tools.Load(e); ok {
		return v.(bool)
	}
	need := len(e.Tool.Secrets) > 0 || r.schemaMayHold(e.Tool.InputSchema, 0)
	r.tools.Store(e, need)
	return need
}

func (r *redactor) schemaMayHold(s *jsonschema.Schema, depth int) bool {
	if s == nil || depth > 32 || s.Ref != "" || len(s.AnyOf)+len(s.AllOf)+len(s.OneOf) > 0 || len(s.PatternProperties) > 0 {
		return true // not worth proving: check each call
	}
	open := s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil
	if (s.Type == "object" || len(s.Properties) > 0) && open {
		return true
	}
	for name, p := range s.Properties {
		if r.secret(name, nil) || r.schemaMayHold(p, depth+1) {
			return true
		}
	}
	if s.Items != nil && s.Items.Type != "" && s.Items.Type != "object" && s.Items.Type != "array" {
		return false
	}
	if s.Items != nil {
		return r.schemaMayHold(s.Items, depth+1)
	}
	return false
}

// redactRecord makes the record safe to keep: secrets out of the raw and the
// normalised arguments. The call itself is left untouched.
func (r *redactor) redactRecord(rec *wield.Record, tool []string) {
	raw := r.redact(rec.Call.Arguments, tool)
	if !bytes.Equal(raw, rec.Call.Arguments) {
		c := *rec.Call
		c.Arguments = raw
		rec.Call = &c
	}
	rec.Arguments = r.redact(rec.Arguments, tool)
}
