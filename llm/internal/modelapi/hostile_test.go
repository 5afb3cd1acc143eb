package modelapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// trickle is a transport whose answers send their headers, then a byte of
// an endless JSON string every second until the request's context ends: a
// hostile server (or a stream stuck open) that never finishes its answer.
type trickle struct{}

func (trickle) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &trickleBody{ctx: r.Context(), head: `{"v":"`}}, nil
}

type trickleBody struct {
	ctx  context.Context
	head string
}

func (b *trickleBody) Read(p []byte) (int, error) {
	if b.head != "" {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-time.After(time.Second):
		p[0] = 'x'
		return 1, nil
	}
}

func (b *trickleBody) Close() error { return nil }

// TestAnswerNeverEnds: an answer whose body never ends fails after the
// attempt's bound, 10 minutes when the client sets none (OpenAI's and
// Gemini's clients set none: it went on until the caller's context ended,
// for a chat never), and the error says so.
func TestAnswerNeverEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		start := time.Now()
		var out struct{ V string }
		err := (&Client{HTTP: &http.Client{Transport: trickle{}}}).Post(ctx, "http://model.test/", struct{}{}, &out)
		if d := time.Since(start); d != DefaultTimeout || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no whole answer within 10m0s") {
			t.Fatalf("Post = %v after %v; want the answer given up after %v", err, d, DefaultTimeout)
		}
	})
}

// TestAnswerDeep: an answer nested 1,000,000 deep is refused as JSON too
// deep to read, without exhausting the stack.
func TestAnswerDeep(t *testing.T) {
	deep := `{"choices":[{"message":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":` +
		strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + `}}]}}]}`
	s := &script{answers: []*http.Response{answer(200, "X-Test-Body", deep)}}
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					Function struct {
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	err := (&Client{HTTP: &http.Client{Transport: s}}).Post(context.Background(), "http://model.test/", struct{}{}, &out)
	if err == nil || !strings.Contains(err.Error(), "decode answer") || !strings.Contains(err.Error(), "depth") {
		t.Fatalf("Post = %v; want the answer refused as too deep", err)
	}
}
