// Package modelapi posts a JSON request to a model provider's HTTP API and
// decodes its JSON answer: what the official SDKs of OpenAI, Anthropic and
// Google did for wield's clients, in the little that wield uses of them.
//
// The SDKs were replaced because of their size, not their behaviour: in
// the default `go build ./cmd/wield` (127.6 MB) openai-go/v3 cost 53.5 MB,
// anthropic-sdk-go 11.8 MB and genai 0.5 MB more alone, 64.5 MB together
// (their root packages link every service they offer, and a binary that
// reaches text/template keeps every exported method). What they did on the
// wire for a chat request is kept here: retries of connection errors, 408,
// 409, 429 and 5xx with exponential backoff and jitter (0.5 s doubling, at
// most 8 s), Retry-After-Ms and Retry-After (seconds or an HTTP date) obeyed
// up to 2 minutes, x-should-retry obeyed, a per-attempt timeout, the
// caller's context honoured while waiting, and no redirect that would carry
// the credentials to another origin.
package modelapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxErrorBody bounds what is read of an error answer: enough for any
// provider's JSON error, not a page of HTML.
const maxErrorBody = 64 << 10

// maxAnswer bounds a 2xx answer: a model's reply with its tool calls is
// kilobytes, the largest a provider documents (a long completion with
// reasoning, or many candidates) a few megabytes; a server that sends more
// (a proxy streaming a file, an endless body) is refused rather than held
// in memory whole. A variable so that tests can lower it.
var maxAnswer int64 = 64 << 20

// maxRetryAfter is the longest Retry-After a retry waits for; beyond it
// the answer is returned as it is (the caller decides).
const maxRetryAfter = 2 * time.Minute

// Client posts JSON to one provider. The zero value works: the default HTTP
// client, no retries, no timeout, no headers.
type Client struct {
	// HTTP sends the requests; nil means [DefaultHTTPClient].
	HTTP *http.Client
	// Header is added to every request: the credentials and the provider's
	// version headers.
	Header http.Header
	// MaxRetries is how many times a request is sent again after a
	// connection error or a retryable status.
	MaxRetries int
	// Timeout bounds each attempt, its answer read whole; zero means
	// [DefaultTimeout], negative none (the caller's context still
	// applies).
	Timeout time.Duration
}

// DefaultTimeout bounds an attempt whose client sets no Timeout: the
// 10 minutes Anthropic's SDK gave a request without streaming, and the
// longest the default client waits for an answer's headers. Without it an
// answer whose body never ends (a hostile server, a proxy holding a stream
// open, a byte a second) held a chat until the caller's context ended.
const DefaultTimeout = 10 * time.Minute

// StatusError is an answer outside 2xx: its status and the start of its
// body, for the provider's package to read its error message from.
type StatusError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Body is the answer's body, at most 64 KiB of it.
	Body []byte
}

// Error says the status only: the body is the provider's to interpret.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// DefaultHTTPClient is the client the OpenAI and Anthropic SDKs used when
// given none: the default transport, with response headers awaited at most
// 10 minutes so that a server that accepts and never answers fails. One is
// shared by every model client, with its pool of connections.
var DefaultHTTPClient = sync.OnceValue(func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
})

// Post sends in as JSON to u and decodes the 2xx answer into out. A non-2xx
// answer is a *[StatusError]; a failure to connect or to read is returned
// wrapped; the context's error when it ends first.
func (c *Client) Post(ctx context.Context, u string, in, out any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	body := buf.Bytes()
	hc := c.httpClient(u)
	for attempt := 0; ; attempt++ {
		res, cancel, err := c.send(ctx, hc, u, body)
		if ctx.Err() != nil {
			if res != nil {
				res.Body.Close()
			}
			cancel()
			return ctx.Err()
		}
		retry := attempt < c.MaxRetries && shouldRetry(res, err)
		delay := time.Duration(0)
		if retry {
			delay, retry = retryDelay(res, attempt)
		}
		if !retry {
			defer cancel()
			if err == nil {
				defer res.Body.Close()
				err = decode(res, out)
			}
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				// The attempt's own bound, not the caller's.
				err = fmt.Errorf("%w: no whole answer within %v", err, c.timeout())
			}
			return err
		}
		if res != nil {
			io.Copy(io.Discard, io.LimitReader(res.Body, maxErrorBody))
			res.Body.Close()
		}
		cancel()
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// send makes one attempt; cancel ends its timeout once its body is read.
func (c *Client) send(ctx context.Context, hc *http.Client, u string, body []byte) (*http.Response, context.CancelFunc, error) {
	cancel := context.CancelFunc(func() {})
	if d := c.timeout(); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, cancel, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	return res, cancel, err
}

// timeout is the bound of one attempt, or 0 for none.
func (c *Client) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return max(c.Timeout, 0)
}

// httpClient is the caller's client that refuses redirects to another
// origin than u's: net/http drops Authorization there, but not x-api-key or
// x-goog-api-key.
func (c *Client) httpClient(u string) *http.Client {
	hc := c.HTTP
	if hc == nil {
		hc = DefaultHTTPClient()
	}
	origin, err := url.Parse(u)
	if err != nil {
		return hc
	}
	guarded := *hc
	next := hc.CheckRedirect
	guarded.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !strings.EqualFold(req.URL.Scheme, origin.Scheme) || !strings.EqualFold(req.URL.Host, origin.Host) {
			return fmt.Errorf("redirect to another origin (%s) refused: it would carry the credentials", req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &guarded
}

func decode(res *http.Response, out any) error {
	if res.StatusCode < 200 || res.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		return &StatusError{StatusCode: res.StatusCode, Body: b}
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if int64(len(b)) > maxAnswer {
		return fmt.Errorf("read answer: larger than %d MiB, refused", maxAnswer>>20)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// shouldRetry is the SDKs' rule: a connection error, 408, 409, 429 or 5xx,
// unless the server says otherwise with x-should-retry.
func shouldRetry(res *http.Response, err error) bool {
	if err != nil {
		return true
	}
	switch res.Header.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// retryDelay is how long to wait before attempt+1: what the server asked
// for, else 0.5 s doubling per attempt up to 8 s, less up to a quarter of
// jitter. ok is false when the server asks for more than 2 minutes.
func retryDelay(res *http.Response, attempt int) (d time.Duration, ok bool) {
	if d, set := retryAfter(res); set {
		if d > maxRetryAfter {
			return 0, false
		}
		return d, true
	}
	d = 8 * time.Second
	if attempt < 4 {
		d = 500 * time.Millisecond << attempt
	}
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d, true
}

// retryAfter reads Retry-After-Ms (milliseconds) or Retry-After (seconds,
// or an HTTP date).
func retryAfter(res *http.Response) (time.Duration, bool) {
	if res == nil {
		return 0, false
	}
	if v := res.Header.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := res.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		if s > maxRetryAfter.Seconds() {
			return maxRetryAfter + 1, true
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// Message is the "message" of the error object most providers answer
// with ({"error": {"message": ...}}), or "" when body has none.
func Message(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Message
}
