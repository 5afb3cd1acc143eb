package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
	secret "github.com/wieldhq/wield/internal/redact"
)

// DefaultMaxResponse is the response body limit of a [Spec] that sets none.
const DefaultMaxResponse = 1 << 20

// DefaultTimeout bounds a request of a [Spec] that sets no Timeout.
const DefaultTimeout = 60 * time.Second

// Spec declares an HTTP tool: one request, its parts templated from the
// call's parameters. A placeholder {name} stands for the parameter name;
// only parameters that are properties of the tool's input schema may appear.
type Spec struct {
	// Method is the HTTP method; empty means GET.
	Method string
	// URL is the address template, such as
	// https://api.example.com/v1/users/{id}?q={query}. Path values are
	// path-escaped, query values query-escaped; a query pair whose parameter
	// has no value is left out. A path value that makes a segment "." or
	// ".." is refused (validation_error): the request would leave the path. A URL that is a single placeholder ({url})
	// takes the parameter as the whole address.
	URL string
	// Query adds query parameters, name to value template; those whose
	// parameter has no value are left out.
	Query map[string]string
	// Headers are header templates; besides {name} they may read ${ENV}.
	Headers map[string]string
	// Body is the body template. A JSON body replaces a string that is
	// exactly "{name}" with the parameter's JSON value, and placeholders in
	// longer strings with its text; any other body is text. Empty means: for
	// POST, PUT and PATCH, send the parameters the URL, query and headers
	// did not use as a JSON object.
	Body string
	// Auth adds credentials read from the environment at call time.
	Auth *Auth
	// Timeout bounds one request, redirects and body included; zero means
	// [DefaultTimeout].
	Timeout time.Duration
	// MaxResponse is the response body limit in bytes; zero means
	// [DefaultMaxResponse].
	MaxResponse int64
	// SecretNames are response header names whose values the output
	// replaces, in addition to the default secret names (Set-Cookie,
	// Authorization, X-Api-Key, ...): the configuration's secret_names.
	SecretNames []string
}

// Auth says how a [Spec] authenticates. The secret is read from the
// environment at each call, so it never sits in a tool file. It is sent to
// the origin of the Spec's URL only: a redirect to another origin is
// followed without it, and without the Headers that read ${ENV} or are
// named as secrets.
type Auth struct {
	// Type is "api_key", "bearer" or "basic".
	Type string
	// In is where an api_key goes: "header" (the default) or "query".
	In string
	// Name is the header or query parameter of an api_key; for a header it
	// defaults to X-API-Key.
	Name string
	// Env names the environment variable that holds the key or token; for
	// basic it is "USER_ENV:PASS_ENV".
	Env string
}

var methods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions,
}

// New makes a tool from an HTTP spec. The tool is in category http, open
// world, with annotations from the method: GET, HEAD and OPTIONS are
// read-only and idempotent, PUT and DELETE idempotent, DELETE destructive.
// Requests go through guard's client; a nil guard refuses every internal
// address.
//
// The tool's output is {"status_code", "headers", "body"}: the body is JSON
// when the response says it is JSON and is, text otherwise. A status that is
// not 2xx is output, not an error: the model decides what it means. Errors:
// permission_denied for a guarded address, validation_error for a missing
// path parameter or bad URL, execution_error for a missing credential or an
// oversized response, timeout when the request runs out of time; transport
// failures are [wield.Transient].
//
// New returns an error if the spec is invalid: an unknown method, a
// placeholder that is not an input property, an unknown auth type.
func New(name, description string, input *jsonschema.Schema, spec Spec, guard *Guard) (*wield.Tool, error) {
	h, err := newHandler(input, spec, guard)
	if err != nil {
		return nil, fmt.Errorf("http tool %q: %w", name, err)
	}
	t := wield.Raw(name, description, input, h)
	t.Category = wield.CategoryHTTP
	t.Source = "http"
	t.Timeout = spec.Timeout
	t.Annotations = annotations(h.method)
	return t, nil
}

func annotations(method string) wield.Annotations {
	a := wield.Annotations{OpenWorld: true}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		a.ReadOnly, a.Idempotent = true, true
	case http.MethodPut:
		a.Idempotent = true
	case http.MethodDelete:
		a.Idempotent, a.Destructive = true, true
	}
	return a
}

type handler struct {
	method  string
	url     urlTemplate
	query   map[string]string
	headers map[string]string
	body    *bodyTemplate
	rest    bool     // send unused parameters as the JSON body
	used    []string // parameters used by URL, query and headers
	auth    *Auth
	max     int64
	client  *http.Client
	secrets *secret.Names // response headers kept out of the output
	creds   []string      // request headers that hold credentials: never sent to another origin
}

func newHandler(input *jsonschema.Schema, spec Spec, guard *Guard) (*handler, error) {
	var errs []error
	h := &handler{
		method:  strings.ToUpper(spec.Method),
		query:   spec.Query,
		headers: spec.Headers,
		max:     spec.MaxResponse,
		secrets: secret.Default,
	}
	if len(spec.SecretNames) > 0 {
		h.secrets = secret.New(secret.DefaultNames, spec.SecretNames)
	}
	if h.method == "" {
		h.method = http.MethodGet
	}
	if !slices.Contains(methods, h.method) {
		errs = append(errs, fmt.Errorf("method %q is not one of %s", spec.Method, strings.Join(methods, ", ")))
	}
	if h.max == 0 {
		h.max = DefaultMaxResponse
	}
	if h.max < 0 {
		errs = append(errs, fmt.Errorf("max response %d is negative", spec.MaxResponse))
	}
	if spec.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is negative", spec.Timeout))
	}
	var props map[string]*jsonschema.Schema
	if input != nil {
		props = input.Properties
	}
	known := func(where string, ns []string) {
		for _, n := range ns {
			if _, ok := props[n]; !ok {
				errs = append(errs, fmt.Errorf("%s refers to {%s}, which is not an input property", where, n))
			}
		}
	}
	if spec.URL == "" {
		errs = append(errs, errors.New("no url"))
	} else if u, err := parseURLTemplate(spec.URL); err != nil {
		errs = append(errs, err)
	} else {
		h.url = u
		known("url", u.names())
		h.used = append(h.used, u.names()...)
	}
	for _, k := range sortedKeys(spec.Query) {
		ns := names(spec.Query[k], false)
		known("query "+k, ns)
		h.used = append(h.used, ns...)
	}
	for _, k := range sortedKeys(spec.Headers) {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			errs = append(errs, fmt.Errorf("header name %q is not valid", k))
		}
		ns := names(spec.Headers[k], false)
		known("header "+k, ns)
		h.used = append(h.used, ns...)
	}
	if spec.Body != "" {
		b := parseBodyTemplate(spec.Body)
		known("body", b.names())
		h.body = &b
	} else {
		switch h.method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			h.rest = true
		}
	}
	if spec.Auth != nil {
		a := *spec.Auth
		switch a.Type {
		case "api_key":
			if a.In == "" {
				a.In = "header"
			}
			if a.In != "header" && a.In != "query" {
				errs = append(errs, fmt.Errorf("auth: api_key in %q is not header or query", a.In))
			}
			if a.Name == "" {
				if a.In == "query" {
					errs = append(errs, errors.New("auth: api_key in query needs a name"))
				}
				a.Name = "X-API-Key"
			}
			if a.Env == "" {
				errs = append(errs, errors.New("auth: api_key needs env, the variable that holds the key"))
			}
		case "bearer":
			if a.Env == "" {
				errs = append(errs, errors.New("auth: bearer needs env, the variable that holds the token"))
			}
		case "basic":
			u, p, ok := strings.Cut(a.Env, ":")
			if !ok || u == "" || p == "" {
				errs = append(errs, fmt.Errorf("auth: basic env %q is not USER_ENV:PASS_ENV", a.Env))
			}
		default:
			errs = append(errs, fmt.Errorf("auth type %q is not api_key, bearer or basic", a.Type))
		}
		h.auth = &a
	}
	if spec.URL != "" && !h.url.fixedOrigin() {
		// Credentials go to the origin the tool file writes (see
		// credentialHeaders); a URL whose host is a parameter has none.
		if h.auth != nil {
			errs = append(errs, fmt.Errorf("auth: the url's scheme and host are a parameter's (%s), so the model would choose where the credential goes; write them in the url", spec.URL))
		}
		for _, k := range sortedKeys(spec.Headers) {
			if len(names(spec.Headers[k], true)) > 0 && h.secrets.Match(k) {
				errs = append(errs, fmt.Errorf("header %s reads the environment and is named as a secret, but the url's scheme and host are a parameter's (%s), so the model would choose where it goes; write them in the url", k, spec.URL))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	timeout := spec.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	h.client = guard.Client(timeout)
	h.creds = h.credentialHeaders()
	if len(h.creds) > 0 {
		check := h.client.CheckRedirect
		h.client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if err := check(req, via); err != nil {
				return err
			}
			if !sameOrigin(req.URL, via[0].URL) {
				for _, k := range h.creds {
					req.Header.Del(k)
				}
			}
			return nil
		}
	}
	return h, nil
}

// credentialHeaders are the headers the tool sends that hold credentials:
// the auth header, and the configured headers that read the environment
// or whose names are secret names. They go to the origin the URL names
// only: net/http copies every header to a redirect's target but
// Authorization and Cookie (and those too within a host, to another port
// or from https to http), so an API that redirects, or has an open
// redirect a model reaches through a parameter, would hand the tool's key
// to any host.
func (h *handler) credentialHeaders() []string {
	var out []string
	if a := h.auth; a != nil {
		switch {
		case a.Type == "api_key" && a.In == "header":
			out = append(out, a.Name)
		case a.Type == "bearer", a.Type == "basic":
			out = append(out, "Authorization")
		}
	}
	for _, k := range sortedKeys(h.headers) {
		if len(names(h.headers[k], true)) > 0 || h.secrets.Match(k) {
			out = append(out, k)
		}
	}
	return out
}

// sameOrigin reports whether a and b have one scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Output is what an HTTP tool returns.
type Output struct {
	StatusCode int               `json:"status_code"`
	Headers    map[string]string `json:"headers"`
	// Body is the response's JSON, or its text as a JSON string.
	Body json.RawMessage `json:"body"`
}

// ReadsArgsOnly tells the engine that the handler keeps no reference to its
// arguments.
func (h *handler) ReadsArgsOnly() bool { return true }

func (h *handler) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	p := params{}
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &p); err != nil {
			return nil, &wield.Error{Type: wield.ErrValidation, Message: "arguments are not a JSON object", Err: err}
		}
	}
	req, err := h.request(ctx, p)
	if err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.transportError(ctx, req, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, h.max+1))
	if err != nil {
		return nil, h.transportError(ctx, req, err)
	}
	if int64(len(body)) > h.max {
		return nil, wield.Errorf(wield.ErrExecution,
			"response from %s %s was cut: the body exceeds the %d-byte limit (max_response)", h.method, redact(req), h.max)
	}
	out := Output{StatusCode: resp.StatusCode, Headers: make(map[string]string, len(resp.Header))}
	for k, vs := range resp.Header {
		out.Headers[k] = strings.Join(vs, ", ")
		if h.secrets.Match(k) {
			// Set-Cookie and the like: the output is written to records
			// and read by a model that may be led to send it elsewhere.
			out.Headers[k] = secret.Mark
		}
	}
	out.Body = responseBody(resp.Header.Get("Content-Type"), body)
	return jsonenc.Marshal(out) // <, > and & as they are: a model reads it
}

// responseBody is the body as JSON if the response says it is JSON and it
// parses, and as a JSON string otherwise.
func responseBody(contentType string, body []byte) json.RawMessage {
	mt, _, _ := mime.ParseMediaType(contentType)
	if (mt == "application/json" || strings.HasSuffix(mt, "+json")) && json.Valid(body) {
		return json.RawMessage(bytes.TrimSpace(body))
	}
	if !utf8.Valid(body) {
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	return jsonenc.AppendString(nil, string(body))
}

func (h *handler) request(ctx context.Context, p params) (*http.Request, error) {
	u, err := h.url.build(p, h.query)
	if err != nil {
		return nil, &wield.Error{Type: wield.ErrValidation, Message: err.Error(), Err: err}
	}
	var body []byte
	contentType := ""
	switch {
	case h.body != nil:
		if body, err = h.body.build(p); err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		contentType = "text/plain; charset=utf-8"
		if h.body.isJSON() {
			contentType = "application/json"
		}
	case h.rest:
		rest := make(map[string]json.RawMessage)
		for k, v := range p {
			if !slices.Contains(h.used, k) {
				rest[k] = v
			}
		}
		if body, err = json.Marshal(rest); err != nil {
			return nil, fmt.Errorf("encode body: %w", err)
		}
		contentType = "application/json"
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, h.method, u.String(), r)
	if err != nil {
		return nil, &wield.Error{Type: wield.ErrValidation, Message: "url " + u.Redacted() + ": " + err.Error(), Err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "wield-httptool")
	for _, k := range sortedKeys(h.headers) {
		v, missing, err := expand(h.headers[k], p, identity, true)
		if err != nil {
			return nil, wield.Errorf(wield.ErrExecution, "header %s: %v", k, err)
		}
		if missing != "" {
			continue
		}
		if i := strings.IndexFunc(v, badHeaderRune); i >= 0 {
			// net/http would refuse it at the round trip, as a transport
			// failure: retried, and not naming the parameter.
			return nil, wield.Errorf(wield.ErrValidation,
				"header %s: the value holds the control character %U (from %s); header values are one line of text",
				k, []rune(v[i:])[0], strings.Join(names(h.headers[k], false), ", "))
		}
		req.Header.Set(k, v)
	}
	if err := h.authorize(req); err != nil {
		return nil, err
	}
	// The trace context of the call, after the configured headers: a
	// traceparent of the tool file's cannot pose as the call's.
	wield.InjectTrace(ctx, req.Header.Set)
	return req, nil
}

// badHeaderRune is a character a header value may not hold: a control
// character other than tab (CR and LF would start another header).
func badHeaderRune(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f
}

func (h *handler) authorize(req *http.Request) error {
	a := h.auth
	if a == nil {
		return nil
	}
	env := func(name string) (string, error) {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return "", wield.Errorf(wield.ErrExecution, "auth: environment variable %s is not set (it holds the %s credential)", name, a.Type)
		}
		return v, nil
	}
	switch a.Type {
	case "api_key":
		key, err := env(a.Env)
		if err != nil {
			return err
		}
		if a.In == "query" {
			q := req.URL.Query()
			q.Set(a.Name, key)
			req.URL.RawQuery = q.Encode()
		} else {
			req.Header.Set(a.Name, key)
		}
	case "bearer":
		tok, err := env(a.Env)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	case "basic":
		uEnv, pEnv, _ := strings.Cut(a.Env, ":")
		user, err := env(uEnv)
		if err != nil {
			return err
		}
		pass, err := env(pEnv)
		if err != nil {
			return err
		}
		req.SetBasicAuth(user, pass)
	}
	return nil
}

// transportError turns a failed round trip into what the model sees. A
// guard's refusal keeps its type; a timeout is a timeout; anything else is a
// transient execution error. The URL is shown without credentials or query,
// which may hold a key.
func (h *handler) transportError(ctx context.Context, req *http.Request, err error) error {
	var we *wield.Error
	if errors.As(err, &we) {
		return we
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The *url.Error repeats the URL, whose query may hold a key: keep only
	// its cause, even for the logs.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return wield.Transient(&wield.Error{Type: wield.ErrTimeout,
			Message: fmt.Sprintf("%s %s timed out", h.method, redact(req)), Err: err})
	}
	return wield.Transient(&wield.Error{Type: wield.ErrExecution,
		Message: fmt.Sprintf("%s %s failed: %s", h.method, redact(req), cause(err)), Err: err})
}

// redact is the request URL without query, fragment or user information.
func redact(req *http.Request) string {
	u := *req.URL
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// cause is the error's text without the *url.Error prefix, which repeats the
// URL (and its query, which may hold a key).
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
