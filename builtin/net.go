package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/redact"
	"golang.org/x/net/http/httpguts"
)

// DefaultNetTimeout bounds one request of the network tools that set no
// Timeout: seed 003's 60 s for network tools.
const DefaultNetTimeout = 60 * time.Second

// DefaultMaxResponseBytes is the response body limit of the network tools
// that set none: 5 MiB.
const DefaultMaxResponseBytes = 5 << 20

// maxRequestTimeout is the longest time a call of http_request may ask for
// with its timeout argument (seed 004: 1 to 300 seconds).
const maxRequestTimeout = 300 * time.Second

// NetOptions configures the HTTP tools. Its zero value is usable: the
// default guard (every internal address refused), 60 s and 5 MiB.
type NetOptions struct {
	// Guard keeps requests away from internal addresses; nil refuses every
	// loopback, private, link-local and metadata address.
	Guard *httptool.Guard
	// Timeout bounds one request, redirects and body included; zero means
	// [DefaultNetTimeout]. A call of http_request may set its own with its
	// timeout argument, 1 to 300 seconds (seed 004).
	Timeout time.Duration
	// MaxResponseBytes is the body limit; a longer body is cut there and the
	// output says so (truncated). web_fetch converts the part of a page it
	// read, and refuses a PDF over the limit, which cannot be read in part.
	// Zero means [DefaultMaxResponseBytes].
	MaxResponseBytes int64
	// SecretNames are names of response headers and URL query parameters
	// whose values the output replaces, in addition to the default secret
	// names (Authorization, Set-Cookie, X-Api-Key, token, ...): the
	// configuration's secret_names, so that what records keep out the model
	// does not read either.
	SecretNames []string
}

func (o NetOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultNetTimeout
}

func (o NetOptions) max() int64 {
	if o.MaxResponseBytes > 0 {
		return o.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// NetTools returns http_get, http_post and http_request (seed 003's network
// tools; http_request also takes seed 004's method default and timeout),
// sharing one guarded client. Their output is an [HTTPOutput]; a status that
// is not 2xx is output, not an error, since the model decides what it means.
//
// Errors: permission_denied when the URL, or a redirect, leads to an
// internal address; validation_error for a bad URL, method, header or
// timeout; timeout when the answer does not come in time; execution_error
// for other failed round trips (marked [wield.Transient]).
func NetTools(opts NetOptions) []*wield.Tool {
	f := newFetcher(opts.Guard, opts.timeout(), opts.max())
	f.names = redact.New(redact.DefaultNames, opts.SecretNames)
	return []*wield.Tool{httpGet(f), httpPost(f), httpRequest(f)}
}

// HTTPGetInput is the input of http_get (seed 003).
type HTTPGetInput struct {
	URL     string            `json:"url" description:"Absolute http or https URL to fetch" pattern:"^https?://" minLength:"8"`
	Headers map[string]string `json:"headers,omitempty" description:"Request headers, name to value"`
}

// HTTPPostInput is the input of http_post (seed 003).
type HTTPPostInput struct {
	URL string `json:"url" description:"Absolute http or https URL to post to" pattern:"^https?://" minLength:"8"`
	// Body is sent as text when it is a JSON string (as application/json if
	// the string holds a JSON object or array), and as JSON otherwise.
	Body    any               `json:"body,omitempty" description:"Request body: a string is sent as it is (as text/plain, or application/json if it holds a JSON object or array, unless headers set Content-Type), an object or array as JSON"`
	Headers map[string]string `json:"headers,omitempty" description:"Request headers, name to value"`
}

// HTTPRequestInput is the input of http_request: seed 003's method, url,
// body and headers, seed 004's default method and timeout, and query.
type HTTPRequestInput struct {
	Method  string            `json:"method,omitempty" description:"HTTP method" enum:"GET,POST,PUT,DELETE,PATCH,HEAD,OPTIONS" default:"GET"`
	URL     string            `json:"url" description:"Absolute http or https URL" pattern:"^https?://" minLength:"8"`
	Headers map[string]string `json:"headers,omitempty" description:"Request headers, name to value"`
	Query   map[string]string `json:"query,omitempty" description:"Query parameters added to the URL, name to value"`
	Body    any               `json:"body,omitempty" description:"Request body for POST, PUT and PATCH: a string is sent as it is (as JSON if it holds a JSON object or array), an object or array as JSON"`
	Timeout float64           `json:"timeout,omitempty" description:"Time limit in seconds (default: the configured limit, 60 s)" minimum:"1" maximum:"300"`
}

// HTTPOutput is the result of the HTTP tools. Status and StatusCode hold the
// same number: seed 003 calls it status, seed 004 status_code. Secrets are
// [REDACTED] in it: headers that carry credentials (Set-Cookie,
// Authorization, ...) and keys in the URL's query.
type HTTPOutput struct {
	Status     int               `json:"status"`
	StatusCode int               `json:"status_code"`
	URL        string            `json:"url" description:"The final URL, after redirects"`
	Headers    map[string]string `json:"headers"`
	// Body is the response's JSON when the content type is JSON and the body
	// parses; otherwise its text as a JSON string, or base64 text when the
	// body is binary (BodyEncoding says so).
	Body         json.RawMessage `json:"body"`
	BodyEncoding string          `json:"body_encoding,omitempty" description:"base64 when the body is binary"`
	Truncated    bool            `json:"truncated,omitempty" description:"The body was cut at the size limit"`
	Note         string          `json:"note,omitempty"`
}

func netTool[In any](name, desc string, cat wield.Category, a wield.Annotations, timeout time.Duration, fn func(context.Context, In) (HTTPOutput, error)) *wield.Tool {
	t := wield.Func(name, desc, fn)
	t.Category = cat
	t.Annotations = a
	t.Tags = []string{"network", "http", "builtin"}
	t.Timeout = timeout
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

func httpGet(f *fetcher) *wield.Tool {
	return netTool("http_get",
		"Send an HTTP GET request and return the status, headers and body (JSON bodies parsed). Internal addresses are refused.",
		wield.CategoryNetwork, wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}, f.timeout+5*time.Second,
		func(ctx context.Context, in HTTPGetInput) (HTTPOutput, error) {
			return f.call(ctx, http.MethodGet, in.URL, nil, in.Headers, nil, 0)
		})
}

func httpPost(f *fetcher) *wield.Tool {
	return netTool("http_post",
		"Send an HTTP POST request and return the status, headers and body (JSON bodies parsed). Internal addresses are refused.",
		wield.CategoryNetwork, wield.Annotations{OpenWorld: true}, f.timeout+5*time.Second,
		func(ctx context.Context, in HTTPPostInput) (HTTPOutput, error) {
			return f.call(ctx, http.MethodPost, in.URL, nil, in.Headers, in.Body, 0)
		})
}

func httpRequest(f *fetcher) *wield.Tool {
	// The timeout argument may ask for up to 300 s, so the engine must not
	// stop the call sooner.
	return netTool("http_request",
		"Send an HTTP request with any method, headers, query and body, and return the status, headers and body (JSON bodies parsed). Internal addresses are refused.",
		wield.CategoryHTTP, wield.Annotations{OpenWorld: true}, max(f.timeout, maxRequestTimeout)+5*time.Second,
		func(ctx context.Context, in HTTPRequestInput) (HTTPOutput, error) {
			method := strings.ToUpper(in.Method)
			if method == "" {
				method = http.MethodGet
			}
			if !slices.Contains([]string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}, method) {
				return HTTPOutput{}, wield.Errorf(wield.ErrValidation, "method %q is not one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS", in.Method)
			}
			if in.Timeout < 0 || in.Timeout > maxRequestTimeout.Seconds() {
				return HTTPOutput{}, wield.Errorf(wield.ErrValidation, "timeout %v is not between 1 and 300 seconds", in.Timeout)
			}
			return f.call(ctx, method, in.URL, in.Query, in.Headers, in.Body, time.Duration(in.Timeout*float64(time.Second)))
		})
}

// fetcher is the guarded client that every network tool uses, with the
// limits that apply to it.
type fetcher struct {
	client  *http.Client
	timeout time.Duration
	max     int64
	names   *redact.Names // secrets kept out of outputs
}

func newFetcher(g *httptool.Guard, timeout time.Duration, maxBytes int64) *fetcher {
	// The client has no timeout of its own: each request gets a context
	// with the timeout that applies to it.
	return &fetcher{client: g.Client(0), timeout: timeout, max: maxBytes, names: redact.Default}
}

// netResponse is a read response: its body, cut at the limit.
type netResponse struct {
	status    int
	url       string
	header    http.Header
	body      []byte
	truncated bool
}

// parseTarget checks a URL given by a model: absolute, http or https, with a
// host.
func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, wield.Errorf(wield.ErrValidation, "url %q is not a valid URL: %v", raw, urlCause(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, wield.Errorf(wield.ErrValidation, "url %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, wield.Errorf(wield.ErrValidation, "url %q has no host", raw)
	}
	return u, nil
}

// encodeRequestBody turns a body argument into bytes and the content type it
// implies: a string is text, unless it holds a JSON object or array (models
// often write JSON bodies as strings); anything else is JSON.
func encodeRequestBody(body any) ([]byte, string, error) {
	switch b := body.(type) {
	case nil:
		return nil, "", nil
	case string:
		if t := strings.TrimSpace(b); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			return []byte(b), "application/json", nil
		}
		return []byte(b), "text/plain; charset=utf-8", nil
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, "", wield.Errorf(wield.ErrValidation, "body cannot be encoded as JSON: %v", err)
	}
	return data, "application/json", nil
}

// call runs one request of the HTTP tools and shapes the output.
func (f *fetcher) call(ctx context.Context, method, rawURL string, query, headers map[string]string, body any, timeout time.Duration) (HTTPOutput, error) {
	u, err := parseTarget(rawURL)
	if err != nil {
		return HTTPOutput{}, err
	}
	if len(query) > 0 {
		q := u.Query()
		for _, k := range sortedHeaderKeys(query) {
			q.Add(k, query[k])
		}
		u.RawQuery = q.Encode()
	}
	data, contentType, err := encodeRequestBody(body)
	if err != nil {
		return HTTPOutput{}, err
	}
	var r io.Reader
	if data != nil {
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, u.String(), r)
	if err != nil {
		return HTTPOutput{}, wield.Errorf(wield.ErrValidation, "url %q: %v", rawURL, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "wield/1.0 (+https://github.com/wieldhq/wield)")
	for _, k := range sortedHeaderKeys(headers) {
		if !httpguts.ValidHeaderFieldName(k) {
			return HTTPOutput{}, wield.Errorf(wield.ErrValidation, "headers: %q is not a valid header name", k)
		}
		if !httpguts.ValidHeaderFieldValue(headers[k]) {
			return HTTPOutput{}, wield.Errorf(wield.ErrValidation, "headers: the value of %s holds characters a header cannot carry (such as a line break)", k)
		}
		if strings.EqualFold(k, "Host") {
			req.Host = headers[k]
			continue
		}
		req.Header.Set(k, headers[k])
	}
	resp, err := f.do(ctx, req, timeout)
	if err != nil {
		return HTTPOutput{}, err
	}
	out := HTTPOutput{Status: resp.status, StatusCode: resp.status, URL: resp.url, Headers: flatHeaders(resp.header, f.names)}
	out.Body, out.BodyEncoding = bodyJSON(resp.header.Get("Content-Type"), resp.body, resp.truncated)
	if resp.truncated {
		out.Truncated = true
		out.Note = fmt.Sprintf("the body was cut at the %d-byte limit; the response is longer", f.max)
	}
	return out, nil
}

// do sends req under the timeout (zero: the fetcher's) and reads the body up
// to the limit. A status that is not 2xx is not an error here.
func (f *fetcher) do(ctx context.Context, req *http.Request, timeout time.Duration) (*netResponse, error) {
	if timeout <= 0 {
		timeout = f.timeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req = req.WithContext(rctx)
	// The call's trace context (when the process traces), set last: a
	// traceparent among a model's headers cannot pose as the call's.
	wield.InjectTrace(ctx, req.Header.Set)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, requestError(ctx, req, err, timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.max+1))
	if err != nil {
		return nil, requestError(ctx, req, err, timeout)
	}
	final := *resp.Request.URL
	final.User = nil // credentials in the URL stay out of the output, and keys in its query
	out := &netResponse{status: resp.StatusCode, url: f.names.URL(final.String()), header: resp.Header, body: body}
	if int64(len(body)) > f.max {
		out.body, out.truncated = body[:f.max], true
	}
	return out, nil
}

// requestError turns a failed round trip into what the model sees: a guard's
// refusal keeps its type (permission_denied), running out of time is a
// timeout, anything else a transient execution_error. The URL is shown
// without its query, which may hold a key.
func requestError(ctx context.Context, req *http.Request, err error, timeout time.Duration) error {
	var we *wield.Error
	if errors.As(err, &we) {
		return we
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	where := req.Method + " " + redactURL(req.URL)
	// The *url.Error repeats the URL, whose query may hold a key (Google's
	// key=): keep only its cause, even for the logs.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return wield.Transient(&wield.Error{Type: wield.ErrTimeout,
			Message: fmt.Sprintf("%s: no complete answer within %s", where, timeout), Err: err})
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return &wield.Error{Type: wield.ErrExecution,
			Message: fmt.Sprintf("%s failed: host %s not found (check the URL)", where, dns.Name), Err: err}
	}
	return wield.Transient(&wield.Error{Type: wield.ErrExecution,
		Message: fmt.Sprintf("%s failed: %s", where, urlCause(err)), Err: err})
}

// redactURL is u without user information, query or fragment.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment, c.ForceQuery = nil, "", "", false
	return c.String()
}

// urlCause is the error's text without the *url.Error prefix, which repeats the
// URL and its query.
func urlCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// flatHeaders is the response's headers for the output, one value each;
// those that carry credentials (Set-Cookie, Authorization, X-Api-Key:
// internal/redact's names) are [REDACTED], since the output is written to
// records and read by a model that may be led to send it elsewhere.
func flatHeaders(h http.Header, names *redact.Names) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if names.Match(k) {
			out[k] = redact.Mark
			continue
		}
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// netMediaType is the lower-case media type of a Content-Type header, or "".
func netMediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	}
	return mt
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// isReadableType reports whether a media type is text a model can read.
func isReadableType(mt string) bool {
	if strings.HasPrefix(mt, "text/") || isJSONType(mt) || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/x-ndjson", "application/yaml", "application/x-yaml",
		"application/toml", "application/graphql", "application/sql":
		return true
	}
	return false
}

// bodyJSON shapes a response body for the output: JSON as JSON (unless cut,
// since cut JSON does not parse), text as a string, binary as base64.
func bodyJSON(contentType string, body []byte, truncated bool) (json.RawMessage, string) {
	mt := netMediaType(contentType)
	if isJSONType(mt) && !truncated {
		if t := bytes.TrimSpace(body); len(t) > 0 && json.Valid(t) {
			return json.RawMessage(t), ""
		}
	}
	text := mt == "" || isReadableType(mt)
	if mt == "" || mt == "application/octet-stream" {
		text = len(body) == 0 || strings.HasPrefix(http.DetectContentType(body), "text/")
	}
	if text {
		if truncated {
			body = trimPartialRune(body)
		}
		if !utf8.Valid(body) {
			body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
		}
		return jsonenc.AppendString(nil, string(body)), "" // <, > and & as they are: a model reads it
	}
	b, _ := json.Marshal(base64.StdEncoding.EncodeToString(body))
	return b, "base64"
}

// trimPartialRune drops an incomplete UTF-8 sequence that a cut left at the
// end.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

func sortedHeaderKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
