package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A task's own questions (the Tasks extension's input_required status).
//
// A tool running as a task for a client of 2026-07-28 that declared
// elicitation, sampling or roots asks it as a call does ([Elicit],
// [Sample], [Roots], [Ask]), but no request waits for the answer: the
// task's status becomes input_required, tasks/get shows the questions not
// answered yet in inputRequests (under the keys the tool chose, else
// wield_<kind>_<n>, n counting the task's questions), and the client
// answers with tasks/update. Each answer is checked as a call's retry's
// is (shape, schema, size: -32602 naming the key); keys that name no
// question waiting are ignored, as the extension says; the task stays
// input_required until every question of the round is answered, then
// works on. The questions live with the task on the server running it:
// tasks/update sent to another server sharing the store has nothing
// waiting there and is acknowledged without effect. A question waits at
// most the requestState TTL (10 minutes by default), or until the server
// starts to shut down ([Server.EndWaits]: no tasks/update reaches it
// then): then the tool's Elicit fails with [ErrNoAnswer] and the task
// ends as the tool decides.

// srvTaskAsk holds the question a task waits for.
type srvTaskAsk struct {
	a   *srvEraAsker
	ttl time.Duration
	// ending is the server's (EndWaits): once it is closed no
	// tasks/update can come (the server's listener is closed), so the
	// question pending, and any asked after, fail at once.
	ending <-chan struct{}

	mu      sync.Mutex
	pending *srvAsk
	n       int         // questions asked so far
	timer   *time.Timer // of the question pending
}

// srvTaskAsker returns the asker of a task whose client declared what
// caps says, nil when it declared nothing that can be asked.
func (s *Server) srvTaskAsker(canElicit, canSample, canRoots bool) *srvTaskAsk {
	if !canElicit && !canSample && !canRoots {
		return nil
	}
	ttl := 10 * time.Minute
	if o := s.opts.InputRequired; o != nil {
		ttl = o.ttl()
	}
	return &srvTaskAsk{ttl: ttl, ending: s.ending, a: &srvEraAsker{canElicit: canElicit, canSample: canSample, canRoots: canRoots, asks: make(chan *srvAsk)}}
}

// srvTaskAskEnded is the answer of a task's question when the server shuts
// down (EndWaits).
var srvTaskAskEnded = fmt.Errorf("%w: the server is shutting down, and no tasks/update can reach it", ErrNoAnswer)

// serve takes the task's questions until ctx (the task's) ends.
func (ta *srvTaskAsk) serve(ctx context.Context) {
	ending := ta.ending
	for {
		select {
		case <-ctx.Done():
			ta.mu.Lock()
			if ta.timer != nil {
				ta.timer.Stop()
			}
			ta.pending = nil
			ta.mu.Unlock()
			return
		case <-ending:
			ending = nil // the pending question fails once; later ones at once, below
			ta.mu.Lock()
			if ta.timer != nil {
				ta.timer.Stop()
			}
			if q := ta.pending; q != nil {
				ta.pending = nil
				q.answer <- srvAnswer{err: srvTaskAskEnded}
			}
			ta.mu.Unlock()
		case q := <-ta.a.asks:
			if ending == nil && ta.ending != nil {
				q.answer <- srvAnswer{err: srvTaskAskEnded}
				continue
			}
			ta.mu.Lock()
			var err error
			for i := range q.items {
				if it := &q.items[i]; !it.named {
					ta.n++
					it.key = fmt.Sprintf("wield_%s_%d", it.kind, ta.n)
				}
			}
			for i, it := range q.items {
				if slices.ContainsFunc(q.items[:i], func(o srvAskItem) bool { return o.key == it.key }) {
					err = fmt.Errorf("input key %q: two questions of one round have it", it.key)
				}
			}
			if err != nil {
				ta.mu.Unlock()
				q.answer <- srvAnswer{err: err}
				continue
			}
			q.got = make([]json.RawMessage, len(q.items))
			ta.pending = q
			if ta.timer != nil {
				ta.timer.Stop()
			}
			ta.timer = time.AfterFunc(ta.ttl, func() {
				ta.mu.Lock()
				defer ta.mu.Unlock()
				if ta.pending == q {
					ta.pending = nil
					q.answer <- srvAnswer{err: fmt.Errorf("%w: no tasks/update within %v", ErrNoAnswer, ta.ttl)}
				}
			})
			ta.mu.Unlock()
		}
	}
}

// requests are the questions the task waits for, nil when none.
func (ta *srvTaskAsk) requests() mcp.InputRequestMap {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.pending == nil {
		return nil
	}
	return srvInputAsked(ta.pending, "").InputRequests
}

// answer takes the answers of a tasks/update: each checked, kept, and the
// round handed to the tool once complete. Keys naming no question waiting
// are ignored.
func (ta *srvTaskAsk) answer(responses map[string]json.RawMessage) error {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	q := ta.pending
	if q == nil {
		return nil
	}
	got, err := q.take(responses)
	if err != nil || got == nil {
		return err
	}
	ta.pending = nil
	q.answer <- srvAnswer{raws: got}
	return nil
}

// srvFirstAsker is a handler whose first questions may be asked before
// its task is made (a tool file's first step with before_task).
type srvFirstAsker interface {
	firstQuestions(args json.RawMessage) ([]Question, error)
}

// srvTaskFirst asks a task tool's first questions before its task is made,
// by input_required on the tools/call itself (SEP-2663 lets a server ask
// before it creates the task): nothing has run, so no state is kept and
// none issued; the retry brings the answers, each checked, and they are
// the tool's answers once it runs as a task. It returns the questions not
// answered yet (nil when none), else the answers by key (nil when the tool
// asks nothing first).
func (s *Server) srvTaskFirst(name string, args json.RawMessage, responses map[string]json.RawMessage) (mcp.InputRequestMap, map[string]json.RawMessage, error) {
	t, ok := s.reg.Tool(name)
	if !ok {
		return nil, nil, nil
	}
	fa, ok := t.Handler.(srvFirstAsker)
	if !ok {
		return nil, nil, nil
	}
	qs, err := fa.firstQuestions(args)
	if err != nil || len(qs) == 0 {
		return nil, nil, nil // the task runs, and its tool says what is wrong
	}
	missing := mcp.InputRequestMap{}
	got := make(map[string]json.RawMessage, len(qs))
	for _, q := range qs {
		it, err := srvItemOf(q)
		if err != nil {
			return nil, nil, nil
		}
		raw, ok := responses[it.key]
		if !ok {
			missing[it.key] = it.req
			continue
		}
		ans, err := srvCheckAnswer(&it, raw)
		if err != nil {
			return nil, nil, err
		}
		got[it.key] = ans
	}
	if len(missing) > 0 {
		return missing, nil, nil
	}
	return nil, got, nil
}
