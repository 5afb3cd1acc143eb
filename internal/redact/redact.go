// Package redact keeps secrets out of what wield writes: call records, log
// lines, events and the outputs of its HTTP tools. A model led by a prompt
// injection may read any of them back (through an HTTP tool, a record
// query, an event stream), so a secret written once is a secret leaked.
//
// A secret is found by name, never by its look: the value of a JSON key, an
// HTTP header or a URL query (or form) parameter whose name is a secret
// name, and the user information of a URL (https://user:pass@host). Names
// match as words, in any case and spelling: "api_key" matches api_key,
// API-Key, X-Api-Key, apiKey and github_api_key, but "token" does not match
// max_tokens.
package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Mark replaces a secret value.
const Mark = "[REDACTED]"

// DefaultNames are the secret names used unless more are added: header
// names that carry credentials, and the parameter names that APIs and
// forms use for them.
var DefaultNames = []string{
	"authorization", "proxy_authorization", "cookie", "set_cookie",
	"api_key", "apikey", "x_api_key", "auth_token", "x_auth_token",
	"token", "access_token", "refresh_token", "id_token", "access_key",
	"secret", "client_secret", "password", "passwd", "private_key",
	"session", "sessionid", "signature",
}

// Names is a set of secret names. Its zero value holds none; use [New].
type Names struct {
	words  []string // normalised names
	probes []string // a word of each name, lower case, for MayHold
}

// Default holds [DefaultNames].
var Default = New(DefaultNames)

// New returns the set of names in lists (normalised: case, "-" and "."
// ignored, camelCase split into words); empty names are skipped.
func New(lists ...[]string) *Names {
	n := &Names{}
	for _, list := range lists {
		for _, s := range list {
			w := normalise(strings.TrimSpace(s))
			if w == "" || slices.Contains(n.words, w) {
				continue
			}
			n.words = append(n.words, w)
			probe := ""
			for _, part := range strings.Split(w, "_") {
				if len(part) > len(probe) {
					probe = part
				}
			}
			if probe != "" && !slices.Contains(n.probes, probe) {
				n.probes = append(n.probes, probe)
			}
		}
	}
	return n
}

// normalise turns a key into lower-case words joined by "_": X-Api-Key,
// x.api.key, xApiKey and XAPIKey all become x_api_key.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '.' || c == ' ' || c == '_':
			c = '_'
		case c >= 'A' && c <= 'Z':
			// A word starts at an upper-case letter after a lower-case one
			// or a digit (apiKey), or before a lower-case one after an
			// upper-case one (APIKey).
			if i > 0 {
				p := s[i-1]
				lowerBefore := p >= 'a' && p <= 'z' || p >= '0' && p <= '9'
				upperRun := p >= 'A' && p <= 'Z' && i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z'
				if lowerBefore || upperRun {
					b.WriteByte('_')
				}
			}
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Match reports whether key names a secret: it is a name, or a name is one
// of its words or runs of words (github_token, x-api-key, db.password).
func (n *Names) Match(key string) bool {
	if n == nil || len(n.words) == 0 || key == "" {
		return false
	}
	k := normalise(key)
	for _, w := range n.words {
		if k == w {
			return true
		}
		if len(k) > len(w) && (strings.HasPrefix(k, w+"_") || strings.HasSuffix(k, "_"+w) || strings.Contains(k, "_"+w+"_")) {
			return true
		}
	}
	return false
}

// MayHold is a quick look: false means b holds no secret that [Names.JSON]
// or [Names.Text] would find.
func (n *Names) MayHold(b []byte) bool {
	if n == nil {
		return false
	}
	if bytes.Contains(b, []byte("://")) && bytes.IndexByte(b, '@') >= 0 {
		return true // user information, maybe
	}
	var buf [1024]byte
	lower := buf[:0]
	if len(b) > len(buf) {
		lower = make([]byte, 0, len(b))
	}
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, p := range n.probes {
		if bytes.Contains(lower, []byte(p)) {
			return true
		}
	}
	return false
}

// JSON returns raw with every secret replaced by [Mark], at any depth: the
// values of secret keys (by name, or exactly one of keys), secret query
// parameters and user information in strings (URLs, form bodies), and the
// same inside strings that hold JSON. It reports whether anything changed;
// raw itself is never changed. Text that is not JSON comes back through
// [Names.Text].
func (n *Names) JSON(raw []byte, keys []string) ([]byte, bool) {
	if len(raw) == 0 || len(keys) == 0 && !n.MayHold(raw) {
		return raw, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		if s := n.Text(string(raw)); s != string(raw) {
			return []byte(s), true
		}
		return raw, false
	}
	v, changed := n.walk(v, keys, 0)
	if !changed {
		return raw, false
	}
	out, err := marshal(v)
	if err != nil {
		return raw, false
	}
	return out, true
}

// marshal is json.Marshal without HTML escaping, so that a redacted URL
// keeps its & as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// maxDepth bounds the nesting walked, JSON in strings included: deeper than
// arguments may nest (schema.MaxDepth). What lies deeper is replaced whole,
// since it was not looked at: a secret is never kept because it was deep.
const maxDepth = 128

func (n *Names) walk(v any, keys []string, depth int) (any, bool) {
	if depth > maxDepth {
		switch v.(type) {
		case map[string]any, []any, string:
			return Mark, true
		}
		return v, false
	}
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if slices.Contains(keys, k) || n.Match(k) {
				if s, ok := e.(string); ok && (s == Mark || s == "") || e == nil {
					continue
				}
				x[k] = Mark
				changed = true
				continue
			}
			if e2, c := n.walk(e, keys, depth+1); c {
				x[k] = e2
				changed = true
			}
		}
	case []any:
		for i, e := range x {
			if e2, c := n.walk(e, keys, depth+1); c {
				x[i] = e2
				changed = true
			}
		}
	case string:
		if t := strings.TrimSpace(x); len(t) > 1 && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
			var inner any
			d := json.NewDecoder(strings.NewReader(t))
			d.UseNumber()
			if d.Decode(&inner) == nil {
				if inner, c := n.walk(inner, keys, depth+1); c {
					if b, err := marshal(inner); err == nil {
						return string(b), true
					}
				}
			}
			return x, false
		}
		if s := n.Text(x); s != x {
			return s, true
		}
	}
	return v, changed
}

// Text returns s with the secrets that text shows by name replaced by
// [Mark]: the user information of URLs (https://user:pass@host becomes
// https://[REDACTED]@host) and the values of secret parameters written
// name=value (a URL's query, a form body, a cookie header).
func (n *Names) Text(s string) string {
	if n == nil {
		return s
	}
	if strings.Contains(s, `":`) || strings.Contains(s, `" :`) {
		s = n.members(s)
	}
	if !strings.Contains(s, "=") && !strings.Contains(s, "://") {
		return s
	}
	s = userinfo(s)
	if !strings.Contains(s, "=") {
		return s
	}
	var b strings.Builder
	last := 0 // s[:last] is in b
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		ks := i
		for ks > 0 && isKeyByte(s[ks-1]) {
			ks--
		}
		if ks == i || !n.Match(s[ks:i]) {
			continue
		}
		end := i + 1
		for end < len(s) && !isValueEnd(s[end]) {
			end++
		}
		if end == i+1 || s[i+1:end] == Mark {
			continue
		}
		b.WriteString(s[last : i+1])
		b.WriteString(Mark)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// members replaces the values of secret members of JSON quoted in text, as
// a message shows a value it refused (`got object {"password":"p"}`), also
// when that JSON is itself inside a JSON string (`{\"password\":\"p\"}`)
// or cut short ("…"): a string value up to its closing quote or the end of
// the text, any other value up to the next , } ] or space.
func (n *Names) members(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is in b
	for i := 0; i < len(s); {
		q := quoteAt(s, i)
		if q == "" {
			i++
			continue
		}
		ks := i + len(q)
		ke := strings.Index(s[ks:], q)
		if ke < 0 {
			break
		}
		ke += ks
		key := s[ks:ke]
		j := ke + len(q)
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j >= len(s) || s[j] != ':' || strings.ContainsAny(key, "\\\"") || !n.Match(key) {
			i = ks // a quote inside may open the next key
			continue
		}
		j++
		for j < len(s) && s[j] == ' ' {
			j++
		}
		vs, ve := j, j
		if vq := quoteAt(s, j); vq != "" {
			ve = closing(s, j+len(vq), vq)
		} else if j < len(s) && (s[j] == '{' || s[j] == '[') {
			ve = nested(s, j, q)
		} else {
			for ve < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[ve])) {
				ve++
			}
		}
		if val := s[vs:ve]; ve == vs || val == `"`+Mark+`"` || val == `\"`+Mark+`\"` || val == "null" {
			i = ve
			continue
		}
		vq := quoteAt(s, vs)
		if vq == "" {
			vq = q
		}
		b.WriteString(s[last:vs])
		b.WriteString(vq + Mark + vq)
		last, i = ve, ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// quoteAt returns the quote that opens at s[i]: `"`, or `\"` inside a JSON
// string; "" when none does.
func quoteAt(s string, i int) string {
	switch {
	case i >= len(s):
		return ""
	case s[i] == '"' && (i == 0 || s[i-1] != '\\'):
		return `"`
	case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
		return `\"`
	}
	return ""
}

// nested returns the end of the object or array that opens at s[i], its
// strings quoted by q: past its closing bracket, or the end of s when it was
// cut.
func nested(s string, i int, q string) int {
	depth := 0
	for i < len(s) {
		if strings.HasPrefix(s[i:], q) {
			i = closing(s, i+len(q), q)
			continue
		}
		switch s[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return len(s)
}

// closing returns the end of a string value opened by quote q whose text
// starts at i: past its closing quote, or the end of s when it was cut.
func closing(s string, i int, q string) int {
	for i < len(s) {
		if q == `"` && s[i] == '\\' {
			i += 2
			continue
		}
		if q == `\"` && (strings.HasPrefix(s[i:], `\\\\`) || strings.HasPrefix(s[i:], `\\\"`)) {
			i += 4 // an escaped backslash or quote, escaped again
			continue
		}
		if strings.HasPrefix(s[i:], q) {
			return i + len(q)
		}
		i++
	}
	return len(s)
}

// isKeyByte reports whether c can be part of a parameter's name.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '[' || c == ']'
}

// isValueEnd reports whether c ends a parameter's value.
func isValueEnd(c byte) bool {
	switch c {
	case '&', '#', ';', ' ', '\t', '\r', '\n', '"', '\'', '<', '>', '`':
		return true
	}
	return false
}

// userinfo replaces the user information of every URL in s.
func userinfo(s string) string {
	from := 0
	for {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return s
		}
		start := from + i + 3
		end := start
		for end < len(s) && !strings.ContainsRune("/?#\\ \t\r\n\"'<>`", rune(s[end])) {
			end++
		}
		at := strings.LastIndexByte(s[start:end], '@')
		if at > 0 && s[start:start+at] != Mark {
			s = s[:start] + Mark + s[start+at:]
			end = start + len(Mark) + (end - start - at)
		}
		from = end
	}
}

// URL is [Names.Text] of one URL: its user information and secret query
// parameters replaced, everything else as it was.
func (n *Names) URL(u string) string { return n.Text(u) }
