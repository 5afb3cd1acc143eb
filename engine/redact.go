package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/redact"
)

// DefaultSecretNames are the names whose values records, logs and events
// never keep; Options.SecretNames adds to them. A name matches a key, a
// header or a query parameter equal to it or made of it and other words
// ("github_token", "X-Api-Key", "db.password", "apiKey"), in any case;
// "max_tokens" does not match "token". Besides values under these names,
// the user information of URLs (https://user:pass@host) is never kept.
var DefaultSecretNames = redact.DefaultNames

// Redacted replaces a secret value in records.
const Redacted = redact.Mark

// redactor knows which keys hold secrets.
type redactor struct {
	names *redact.Names
	tools sync.Map // *wield.Entry → bool: may its arguments hold a secret?
}

func newRedactor(names []string) *redactor {
	return &redactor{names: redact.New(DefaultSecretNames, names)}
}

// redact returns args with every secret, at any depth, replaced by
// [Redacted]: values of secret keys (and of the tool's own secret
// parameters), secret query parameters and user information in strings.
// args itself is not changed.
func (r *redactor) redact(args json.RawMessage, tool []string) json.RawMessage {
	out, _ := r.names.JSON(args, tool)
	return out
}

// text is s with secret query parameters and user information of URLs
// replaced: for error messages, which may quote a URL.
func (r *redactor) text(s string) string { return r.names.Text(s) }

// needed reports whether arguments of the tool can hold a secret: its
// schema names a secret parameter somewhere, lets arbitrary keys in, or
// takes a string (which may be a URL with a key in its query). Tools whose
// schemas settle it once skip redaction of their arguments.
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
	if s.Type == "" && len(s.Types) == 0 && len(s.Properties) == 0 && s.Items == nil {
		return true // anything goes
	}
	if s.Type == "string" || containsString(s.Types) {
		return true
	}
	open := s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil
	if (s.Type == "object" || len(s.Properties) > 0) && open {
		return true
	}
	for name, p := range s.Properties {
		if r.names.Match(name) || r.schemaMayHold(p, depth+1) {
			return true
		}
	}
	if s.Items != nil {
		return r.schemaMayHold(s.Items, depth+1)
	}
	return false
}

func containsString(types []string) bool {
	for _, t := range types {
		if t == "string" {
			return true
		}
	}
	return false
}

// redactRecord makes the record safe to keep: secrets out of the raw and
// the normalised arguments (when the tool's arguments can hold one), and
// out of the output and the error text. The call and the result the caller
// gets are left untouched: the handler got the real values, and the caller
// gets the real output.
func (r *redactor) redactRecord(rec *wield.Record, tool []string, args bool) {
	if args {
		raw := r.redact(rec.Call.Arguments, tool)
		if !bytes.Equal(raw, rec.Call.Arguments) {
			c := *rec.Call
			c.Arguments = raw
			rec.Call = &c
		}
		rec.Arguments = r.redact(rec.Arguments, tool)
	}
	res := rec.Result
	if res == nil {
		return
	}
	out, oc := r.names.JSON(res.Output, tool)
	full, fc := r.names.JSON(res.FullOutput, tool)
	verrs, vc := r.validation(res.ValidationErrors, tool)
	msg := r.errorText(res, tool)
	if oc || fc || vc || msg != res.Error {
		c := *res
		c.Output, c.FullOutput, c.Error, c.ValidationErrors = out, full, msg, verrs
		rec.Result = &c
	}
}

// validation returns the problems with the values they quote of secrets
// replaced: JSON members of secret names in a message (`got object
// {"password":"p"}`), and the whole value a message quotes when its path
// goes through a secret name (`password: expected string, got number 1234`).
// It reports whether anything changed; errs itself is not changed.
func (r *redactor) validation(errs []wield.ValidationError, tool []string) ([]wield.ValidationError, bool) {
	var out []wield.ValidationError
	for i, v := range errs {
		msg := r.text(v.Message)
		if r.secretPath(v.Path, tool) {
			if at := strings.LastIndex(msg, "got "); at >= 0 {
				msg = msg[:at] + "got " + Redacted
			}
		}
		if msg == v.Message {
			continue
		}
		if out == nil {
			out = slices.Clone(errs)
		}
		out[i].Message = msg
	}
	if out == nil {
		return errs, false
	}
	return out, true
}

// secretPath reports whether a problem's path (options.password,
// headers["X-Api-Key"], keys[2]) names a secret at any of its steps.
func (r *redactor) secretPath(path string, tool []string) bool {
	for _, part := range strings.FieldsFunc(path, func(c rune) bool { return c == '.' || c == '[' || c == ']' || c == '"' }) {
		if slices.Contains(tool, part) || r.names.Match(part) {
			return true
		}
	}
	return false
}

// errorText is a result's error as records and events keep it: a
// validation failure's summary rebuilt from its redacted problems, any
// other error with secret parameters and user information of URLs replaced.
func (r *redactor) errorText(res *wield.Result, tool []string) string {
	if res.ErrorType == wield.ErrValidation && len(res.ValidationErrors) > 0 {
		if errs, changed := r.validation(res.ValidationErrors, tool); changed {
			return validationMessage(res.Tool, errs)
		}
	}
	return r.text(res.Error)
}
