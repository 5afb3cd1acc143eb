package httptool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// placeholder matches {name} (a parameter) and ${NAME} (an environment
// variable, in headers only; elsewhere the $ is literal text).
var placeholder = regexp.MustCompile(`(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// params are the call's arguments by name, as raw JSON.
type params map[string]json.RawMessage

// text is the value of a parameter as it appears inside a larger string:
// strings as they are, null as nothing, everything else as its JSON text.
func (p params) text(name string) (string, bool) {
	raw, ok := p[name]
	if !ok {
		return "", false
	}
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return "", false
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s, true
		}
	}
	return string(raw), true
}

// names returns the parameter names a template refers to, in order, without
// repeats. Environment references (${X}) are left out unless env is set, in
// which case only they are returned.
func names(tmpl string, env bool) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		if (m[1] == "$") == env && !slices.Contains(out, m[2]) {
			out = append(out, m[2])
		}
	}
	return out
}

// expand substitutes the parameters in tmpl, escaped by esc, and (when env is
// set) ${NAME} environment references unescaped. It reports the first
// parameter that has no value, and fails on an unset environment variable.
func expand(tmpl string, p params, esc func(string) string, env bool) (s, missing string, err error) {
	s = placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		if sub[1] == "$" {
			if !env {
				return "$" + replaceParam(sub[2], p, esc, &missing)
			}
			v, ok := os.LookupEnv(sub[2])
			if !ok && err == nil {
				err = fmt.Errorf("environment variable %s is not set", sub[2])
			}
			return v
		}
		return replaceParam(sub[2], p, esc, &missing)
	})
	return s, missing, err
}

func replaceParam(name string, p params, esc func(string) string, missing *string) string {
	v, ok := p.text(name)
	if !ok && *missing == "" {
		*missing = name
	}
	return esc(v)
}

func identity(s string) string { return s }

// urlTemplate is a URL with {name} placeholders, split so that path values
// are path-escaped and query values query-escaped.
type urlTemplate struct {
	whole string   // set when the template is a single placeholder: the URL itself is a parameter
	path  string   // scheme, host and path, before '?'
	query []string // k=v pairs after '?', each a template
}

func parseURLTemplate(tmpl string) (urlTemplate, error) {
	if m := placeholder.FindStringSubmatch(tmpl); m != nil && m[0] == tmpl && m[1] == "" {
		return urlTemplate{whole: m[2]}, nil
	}
	tmpl, _, _ = strings.Cut(tmpl, "#")
	path, rawQuery, _ := strings.Cut(tmpl, "?")
	lower := strings.ToLower(path)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return urlTemplate{}, fmt.Errorf("url %q does not start with http:// or https://", tmpl)
	}
	t := urlTemplate{path: path}
	for _, pair := range strings.Split(rawQuery, "&") {
		if pair != "" {
			t.query = append(t.query, pair)
		}
	}
	return t, nil
}

// fixedOrigin reports whether the template writes the scheme, host and
// port itself: no placeholder before the path.
func (t urlTemplate) fixedOrigin() bool {
	if t.whole != "" {
		return false
	}
	_, rest, _ := strings.Cut(t.path, "://")
	authority, _, _ := strings.Cut(rest, "/")
	return !placeholder.MatchString(authority)
}

// names returns the parameters the URL refers to.
func (t urlTemplate) names() []string {
	if t.whole != "" {
		return []string{t.whole}
	}
	out := names(t.path, false)
	for _, q := range t.query {
		for _, n := range names(q, false) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// build makes the request URL. A path parameter without a value is an error
// (the URL would point elsewhere); a query pair whose parameter has no value
// is left out, as are extra query parameters (from Spec.Query) without one.
func (t urlTemplate) build(p params, extra map[string]string) (*url.URL, error) {
	var raw string
	if t.whole != "" {
		v, ok := p.text(t.whole)
		if !ok {
			return nil, fmt.Errorf("parameter %q (the URL) has no value", t.whole)
		}
		raw = v
	} else {
		path, missing, _ := expand(t.path, p, url.PathEscape, false)
		if missing != "" {
			return nil, fmt.Errorf("parameter %q (in the URL path) has no value", missing)
		}
		if err := t.dotSegment(path); err != nil {
			return nil, err
		}
		var q []string
		for _, pair := range t.query {
			k, v, hasEq := strings.Cut(pair, "=")
			k, missK, _ := expand(k, p, url.QueryEscape, false)
			v, missV, _ := expand(v, p, url.QueryEscape, false)
			if missK != "" || missV != "" {
				continue
			}
			if hasEq {
				k += "=" + v
			}
			q = append(q, k)
		}
		raw = path
		if len(q) > 0 {
			raw += "?" + strings.Join(q, "&")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	if len(extra) > 0 {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var q []string
		for _, k := range keys {
			v, missing, _ := expand(extra[k], p, identity, false)
			if missing != "" {
				continue
			}
			q = append(q, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
		if len(q) > 0 {
			if u.RawQuery != "" {
				u.RawQuery += "&"
			}
			u.RawQuery += strings.Join(q, "&")
		}
	}
	return u, nil
}

// dotSegment refuses a path whose parameters made a segment "." or "..":
// servers resolve those (Go's ServeMux redirects /users/../admin to
// /admin), so a value would move the request out of the path the tool
// file fixed, to any path of the host, with the tool's credentials. A value
// cannot make a "/" (path values are escaped), so the expanded path has the
// template's segments, one for one.
func (t urlTemplate) dotSegment(path string) error {
	got := strings.Split(path, "/")
	tmpl := strings.Split(t.path, "/")
	if len(got) != len(tmpl) {
		return fmt.Errorf("the URL path %q does not keep the template's segments", path)
	}
	for i, seg := range got {
		if (seg == "." || seg == "..") && seg != tmpl[i] {
			what := "a parameter"
			if ns := names(tmpl[i], false); len(ns) > 0 {
				what = fmt.Sprintf("parameter %q", ns[0])
			}
			return fmt.Errorf("%s (in the URL path) makes the segment %q, which would move the request up the path; a path value must be a name, not . or ..", what, seg)
		}
	}
	return nil
}

// bodyTemplate is a request body. A JSON template is parsed once; at call
// time a string that is exactly "{name}" becomes the parameter's JSON value
// (and disappears from its object if the parameter has none), and a
// placeholder inside a longer string becomes the parameter's text. A body
// that is not JSON is a text template.
type bodyTemplate struct {
	raw  string
	json any // parsed JSON template; nil for a text body
}

func parseBodyTemplate(raw string) bodyTemplate {
	var v any
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err == nil && !d.More() {
		return bodyTemplate{raw: raw, json: v}
	}
	return bodyTemplate{raw: raw}
}

func (b bodyTemplate) isJSON() bool { return b.json != nil }

func (b bodyTemplate) names() []string {
	return names(b.raw, false)
}

func (b bodyTemplate) build(p params) ([]byte, error) {
	if !b.isJSON() {
		s, _, _ := expand(b.raw, p, identity, false)
		return []byte(s), nil
	}
	v, _ := fillJSON(b.json, p)
	return json.Marshal(v)
}

// fillJSON substitutes the parameters into a parsed JSON template. keep is
// false for an exact placeholder whose parameter has no value.
func fillJSON(v any, p params) (out any, keep bool) {
	switch v := v.(type) {
	case string:
		if m := placeholder.FindStringSubmatch(v); m != nil && m[0] == v && m[1] == "" {
			raw, ok := p[m[2]]
			if !ok {
				return nil, false
			}
			return json.RawMessage(raw), true
		}
		s, _, _ := expand(v, p, identity, false)
		return s, true
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if y, ok := fillJSON(x, p); ok {
				out[k] = y
			}
		}
		return out, true
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i], _ = fillJSON(x, p)
		}
		return out, true
	}
	return v, true
}
