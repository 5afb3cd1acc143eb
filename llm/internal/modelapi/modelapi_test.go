package modelapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// script is a transport that answers from a list (the last answer again
// when it runs out), records each attempt's body and the fake time it came
// at. A nil answer is a connection error; block waits for the request's
// context to end.
type script struct {
	mu      sync.Mutex
	answers []*http.Response
	block   bool
	bodies  []string
	at      []time.Time
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	if s.block {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	a := s.answers[min(n, len(s.answers)-1)]
	if a == nil {
		return nil, errors.New("connection refused")
	}
	c := *a
	c.Body = io.NopCloser(strings.NewReader(c.Header.Get("X-Test-Body")))
	return &c, nil
}

func answer(status int, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{StatusCode: status, Header: h}
}

func TestPostRetries(t *testing.T) {
	ok := answer(200, "X-Test-Body", `{"v":1}`)
	for _, tt := range []struct {
		name     string
		answers  []*http.Response
		retries  int
		attempts int
		// waits are the times between attempts: exact, or a range for
		// the jittered backoff.
		waits  [][2]time.Duration
		status int // of the StatusError, 0 for success
	}{
		{"503 then ok", []*http.Response{answer(503), ok}, 2, 2, [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}}, 0},
		{"backoff doubles", []*http.Response{answer(500), answer(502), nil, ok}, 3, 4,
			[][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}, {1500 * time.Millisecond, 2 * time.Second}}, 0},
		{"retry-after seconds", []*http.Response{answer(429, "Retry-After", "3"), ok}, 2, 2, [][2]time.Duration{{3 * time.Second, 3 * time.Second}}, 0},
		{"retry-after-ms", []*http.Response{answer(429, "Retry-After-Ms", "1500", "Retry-After", "9"), ok}, 2, 2, [][2]time.Duration{{1500 * time.Millisecond, 1500 * time.Millisecond}}, 0},
		{"retry-after too long", []*http.Response{answer(429, "Retry-After", "600", "X-Test-Body", `{"error":{"message":"slow down"}}`)}, 2, 1, nil, 429},
		{"408 and 409 retried", []*http.Response{answer(408), answer(409), ok}, 2, 3, [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}}, 0},
		{"400 not retried", []*http.Response{answer(400), ok}, 2, 1, nil, 400},
		{"x-should-retry false", []*http.Response{answer(500, "X-Should-Retry", "false"), ok}, 2, 1, nil, 500},
		{"x-should-retry true", []*http.Response{answer(400, "X-Should-Retry", "true"), ok}, 2, 2, [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}}, 0},
		{"retries run out", []*http.Response{answer(500)}, 2, 3, [][2]time.Duration{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}}, 500},
		{"no retries", []*http.Response{answer(500), ok}, 0, 1, nil, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{answers: tt.answers}
				c := Client{HTTP: &http.Client{Transport: s}, MaxRetries: tt.retries, Header: http.Header{"X-Api-Key": {"k"}}}
				var out struct{ V int }
				err := c.Post(context.Background(), "http://model.test/v1/x", map[string]string{"q": "<é>"}, &out)
				var se *StatusError
				switch {
				case tt.status == 0 && (err != nil || out.V != 1):
					t.Fatalf("got %+v, %v", out, err)
				case tt.status != 0 && (!errors.As(err, &se) || se.StatusCode != tt.status):
					t.Fatalf("error %v, want status %d", err, tt.status)
				}
				if len(s.bodies) != tt.attempts {
					t.Fatalf("%d attempts, want %d", len(s.bodies), tt.attempts)
				}
				for i, b := range s.bodies {
					if b != `{"q":"<é>"}`+"\n" {
						t.Errorf("attempt %d sent %q", i, b)
					}
				}
				for i, w := range tt.waits {
					if d := s.at[i+1].Sub(s.at[i]); d < w[0] || d > w[1] {
						t.Errorf("wait %d: %v, want %v..%v", i, d, w[0], w[1])
					}
				}
			})
		})
	}
}

func TestPostErrorBody(t *testing.T) {
	s := &script{answers: []*http.Response{answer(401, "X-Test-Body", `{"error":{"message":"bad key"}}`)}}
	c := Client{HTTP: &http.Client{Transport: s}}
	err := c.Post(context.Background(), "http://model.test/", struct{}{}, &struct{}{})
	var se *StatusError
	if !errors.As(err, &se) || se.Error() != "401 Unauthorized" || Message(se.Body) != "bad key" {
		t.Fatalf("got %v", err)
	}
	if Message([]byte("<html>oops</html>")) != "" {
		t.Error("an HTML body gave a message")
	}
}

func TestPostBadAnswer(t *testing.T) {
	s := &script{answers: []*http.Response{answer(200, "X-Test-Body", `<html>`)}}
	c := Client{HTTP: &http.Client{Transport: s}}
	if err := c.Post(context.Background(), "http://model.test/", struct{}{}, &struct{}{}); err == nil || !strings.Contains(err.Error(), "decode answer") {
		t.Fatalf("got %v", err)
	}
}

// TestPostContext: the caller's context ends the wait between attempts,
// and the per-attempt timeout ends an attempt that hangs.
func TestPostContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []*http.Response{answer(429, "Retry-After", "60")}}
		c := Client{HTTP: &http.Client{Transport: s}, MaxRetries: 2}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := c.Post(ctx, "http://model.test/", struct{}{}, &struct{}{})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 10*time.Second || len(s.bodies) != 1 {
			t.Fatalf("got %v after %v and %d attempts", err, time.Since(start), len(s.bodies))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		s := &script{block: true}
		c := Client{HTTP: &http.Client{Transport: s}, MaxRetries: 1, Timeout: time.Minute}
		start := time.Now()
		err := c.Post(context.Background(), "http://model.test/", struct{}{}, &struct{}{})
		if !errors.Is(err, context.DeadlineExceeded) || len(s.bodies) != 2 {
			t.Fatalf("got %v after %d attempts", err, len(s.bodies))
		}
		if d := time.Since(start); d < 2*time.Minute || d > 2*time.Minute+time.Second {
			t.Errorf("took %v, want two attempts of a minute and a backoff", d)
		}
	})
}

// TestRedirects: a redirect on the same origin is followed with the
// credentials; one to another origin is refused before it is made.
func TestRedirects(t *testing.T) {
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, "other:"+r.Header.Get("X-Api-Key"))
		io.WriteString(w, `{}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+":"+r.Header.Get("X-Api-Key"))
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusPermanentRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusPermanentRedirect)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	c := Client{Header: http.Header{"X-Api-Key": {"secret"}}}
	if err := c.Post(context.Background(), srv.URL+"/moved", struct{}{}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Post(context.Background(), srv.URL+"/away", struct{}{}, &struct{}{}); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("got %v", err)
	}
	if diff := cmp.Diff([]string{"/moved:secret", "/here:secret", "/away:secret"}, seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestAnswerBounded: a 2xx answer larger than maxAnswer is refused with an
// error that says so, not read whole into memory (it was read without a
// bound: a proxy that streamed a file, or an endless body, grew the process
// until the context ended).
func TestAnswerBounded(t *testing.T) {
	defer func(old int64) { maxAnswer = old }(maxAnswer)
	maxAnswer = 1 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"v":"`)
		chunk := strings.Repeat("x", 64<<10)
		for range 64 { // 4 MiB: past the bound, and bounded itself
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}`)
	}))
	defer srv.Close()
	var out struct{ V string }
	err := (&Client{}).Post(context.Background(), srv.URL, map[string]int{"a": 1}, &out)
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("Post = %v, want the answer refused as larger than 1 MiB", err)
	}
	// At the bound exactly, it is read.
	maxAnswer = 4<<20 + 16
	if err := (&Client{}).Post(context.Background(), srv.URL, map[string]int{"a": 1}, &out); err != nil || len(out.V) != 4<<20 {
		t.Fatalf("Post = %v, %d bytes; want the 4 MiB answer read", err, len(out.V))
	}
}
