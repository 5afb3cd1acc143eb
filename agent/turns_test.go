package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
)

// fanOutCalls is how many call_subagent calls each reply of the fan-out
// model holds.
const fanOutCalls = 50

// fanOutModel is an OpenAI-compatible server whose every reply holds
// fanOutCalls call_subagent calls handing work to the mathematician, as a
// prompt-injected model might write them; with answerWhenSpent, the lead
// (the agent whose instructions are leadInstructions) answers instead once
// a result it reads says the budget is spent. Past cap requests it answers
// 400, so a loop without a bound ends, and fails the test, soon.
type fanOutModel struct {
	cap             int
	answerWhenSpent bool

	mu       sync.Mutex
	requests []map[string]any
	lead     []int // the indexes of the lead's requests
	inFlight int
	most     int // the most requests in flight at once
}

const leadInstructions = "You lead."

func (f *fanOutModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	msgs := messages(req)
	isLead := len(msgs) > 0 && msgs[0]["role"] == "system" && msgs[0]["content"] == leadInstructions
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	if isLead {
		f.lead = append(f.lead, n)
	}
	f.inFlight++
	f.most = max(f.most, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	if n >= f.cap {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"the test's cap of model requests is passed"}}`)
		return
	}
	if f.answerWhenSpent && isLead {
		for _, m := range msgs {
			if m["role"] == "tool" && strings.Contains(fmt.Sprint(m["content"]), "is spent") {
				io.WriteString(w, openAIReply("Here is what I have."))
				return
			}
		}
	}
	calls := make([][3]string, fanOutCalls)
	for i := range calls {
		calls[i] = [3]string{fmt.Sprintf("call_%d_%d", n, i), "call_subagent", `{"agent_name":"mathematician","instruction":"Hand this on to the mathematician, fifty times."}`}
	}
	io.WriteString(w, openAIReply("", calls...))
}

// spentResults counts the tool results of request i that say the run's
// budget of max turns is spent, and all its tool results.
func (f *fanOutModel) spentResults(i, max int) (spent, all int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := fmt.Sprintf("the run's budget of %d model turns is spent; answer with what you have", max)
	for _, m := range messages(f.requests[i]) {
		if m["role"] != "tool" {
			continue
		}
		all++
		if strings.Contains(fmt.Sprint(m["content"]), want) {
			spent++
		}
	}
	return spent, all
}

// TestLoopTurnBudget: a model whose every reply hands work to fifty
// sub-agents, whose replies do the same, makes at most the Run's budget of
// model requests (MaxTurns, MaxSteps × MaxDepth by default), not one loop
// of MaxSteps turns per call and depth; one sub-agent works at a time;
// the call_subagent results the lead reads say the budget is spent; the
// lead stops with ErrMaxTurns, or answers with what it has; every
// goroutine of the run returns.
func TestLoopTurnBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   agent.LoopOptions
		budget int
		answer bool
		// spent is how many of the results the lead reads last say the
		// budget is spent: all but the first when its first sub-agent
		// ran out of steps, not of turns.
		spent int
	}{
		{name: "default budget", budget: 30, spent: fanOutCalls},
		{name: "max turns 6", opts: agent.LoopOptions{MaxTurns: 6}, budget: 6, spent: fanOutCalls},
		{name: "max steps 4 depth 2", opts: agent.LoopOptions{MaxSteps: 4, MaxDepth: 2}, budget: 8, spent: fanOutCalls - 1},
		{name: "the lead answers", opts: agent.LoopOptions{MaxTurns: 12}, budget: 12, answer: true, spent: fanOutCalls},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, e := newWorld(t)
			f := &fanOutModel{cap: 200, answerWhenSpent: tc.answer}
			srv := httptest.NewServer(f)
			defer srv.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			m, err := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: srv.URL + "/v1", MaxRetries: -1, HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			math := &agent.Agent{Name: "mathematician", Instructions: "You compute.", Model: m, Toolkit: toolkit(t, reg, "mathematician", "call_subagent")}
			lead := &agent.Agent{Name: "lead", Instructions: leadInstructions, Model: m, Toolkit: toolkit(t, reg, "lead", "call_subagent")}
			opts := tc.opts
			opts.Agents = map[string]*agent.Agent{"mathematician": math}
			before := runtime.NumGoroutine()

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := agent.NewLoop(e, &opts).Run(ctx, lead, "conv-fan", []llm.Message{{Role: llm.RoleUser, Content: "Compute."}})

			f.mu.Lock()
			asked, most, leadAsked := len(f.requests), f.most, slices.Clone(f.lead)
			f.mu.Unlock()
			if asked > tc.budget {
				t.Fatalf("the model was asked %d times, past the run's budget of %d (%v)", asked, tc.budget, err)
			}
			if out == nil || out.Turns != asked {
				t.Fatalf("outcome %+v, want Turns = %d, the requests the model got (%v)", out, asked, err)
			}
			if tc.answer {
				if err != nil || out.Answer != "Here is what I have." {
					t.Fatalf("the lead should answer with what it has: %q, %v", out.Answer, err)
				}
			} else if !errors.Is(err, agent.ErrMaxTurns) || errors.Is(err, agent.ErrMaxSteps) ||
				!strings.Contains(err.Error(), fmt.Sprintf("(%d turns, every agent's)", tc.budget)) {
				t.Fatalf("err = %v, want ErrMaxTurns saying the budget of %d", err, tc.budget)
			}
			// Every turn the budget allows is used: the sub-agents leave
			// the lead its last turn, in which it reads that the budget is
			// spent.
			if asked != tc.budget {
				t.Errorf("the model was asked %d times, want the whole budget of %d", asked, tc.budget)
			}
			if most != 1 {
				t.Errorf("%d model requests were in flight at once; the hand-offs of a reply run one at a time", most)
			}
			// The lead's first turn, then its last, kept for it.
			if len(leadAsked) != 2 || leadAsked[0] != 0 || leadAsked[1] != asked-1 {
				t.Fatalf("the lead's requests are %v of %d, want the first and the last", leadAsked, asked)
			}
			if out.Steps != len(leadAsked) {
				t.Errorf("Steps = %d, want the lead's %d turns", out.Steps, len(leadAsked))
			}
			// What the lead read last: the call_subagent calls of its
			// first reply failed for the budget (the sub-agent that ran
			// out, and those after it, before they started).
			if spent, all := f.spentResults(leadAsked[1], tc.budget); all != fanOutCalls || spent != tc.spent {
				t.Errorf("the lead's last request holds %d results, %d saying the budget is spent; want %d and %d", all, spent, fanOutCalls, tc.spent)
			}

			// The run's goroutines return: the batches' calls, the
			// sub-agents, the model client's requests.
			tr.CloseIdleConnections()
			srv.CloseClientConnections()
			deadline := time.Now().Add(10 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after the run, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
