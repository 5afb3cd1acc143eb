//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// subAgentCaller is the caller of the sub-agent of the tool engine's
// architecture, section 3.1: tool_sub_agent_001, working for
// conversation_agent_001 in conversation conv_001.
const subAgentCaller = `{"id":"tool_sub_agent_001","type":"conversation_agent","conversation_id":"conv_001","variables":{"parent_agent_id":"conversation_agent_001"}}`

// subAgentSummary is the answer of GET /v1/callers/{id}/summary.
type subAgentSummary struct {
	AgentID         string         `json:"agent_id"`
	ParentAgentID   string         `json:"parent_agent_id"`
	TotalCalls      int            `json:"total_calls"`
	SuccessfulCalls int            `json:"successful_calls"`
	FailedCalls     int            `json:"failed_calls"`
	SuccessRate     float64        `json:"success_rate"`
	ToolUsage       map[string]int `json:"tool_usage"`
	CallDetails     []struct {
		Tool   string `json:"tool"`
		OK     bool   `json:"ok"`
		CallID string `json:"call_id"`
	} `json:"call_details"`
	Truncated bool `json:"truncated"`
}

// runSubAgent makes the sub-agent's calls of section 3.1 over REST: one
// http_request (against api, a loopback server), then a batch of echo and
// calculator.
func runSubAgent(t *testing.T, s *server, api string) {
	t.Helper()
	status, b := s.do("POST", "/v1/tools/http_request/call",
		`{"arguments":{"url":"`+api+`/data"},"timeout_ms":30000,"caller":`+subAgentCaller+`}`)
	if status != 200 || !strings.Contains(string(b), `"ok":true`) || !strings.Contains(string(b), `"answer":42`) {
		t.Fatalf("http_request: %d %s\nserver stderr:\n%s", status, b, s.stderr)
	}
	status, b = s.do("POST", "/v1/batch", `{"calls":[
		{"tool":"echo","arguments":{"message":"hello"},"caller":`+subAgentCaller+`},
		{"tool":"calculator","arguments":{"expression":"1+2"},"caller":`+subAgentCaller+`}]}`)
	var batch struct {
		Results []struct {
			Tool   string          `json:"tool"`
			OK     bool            `json:"ok"`
			Output json.RawMessage `json:"output"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &batch); status != 200 || err != nil || len(batch.Results) != 2 {
		t.Fatalf("batch: %d %v %s", status, err, b)
	}
	if r := batch.Results[0]; !r.OK || r.Tool != "echo" || !strings.Contains(string(r.Output), "hello") {
		t.Errorf("echo in the batch: %+v", r)
	}
	if r := batch.Results[1]; !r.OK || r.Tool != "calculator" || !strings.Contains(string(r.Output), "3") {
		t.Errorf("calculator in the batch: %+v (%s)", r, r.Output)
	}
}

// checkSummary asks a server for the sub-agent's summary and checks it is
// the one section 3.1 shows; it returns the answer's body.
func checkSummary(t *testing.T, s *server) []byte {
	t.Helper()
	status, b := s.do("GET", "/v1/callers/tool_sub_agent_001/summary", "")
	var sum subAgentSummary
	if err := json.Unmarshal(b, &sum); status != 200 || err != nil {
		t.Fatalf("summary: %d %v %s", status, err, b)
	}
	if sum.AgentID != "tool_sub_agent_001" || sum.ParentAgentID != "conversation_agent_001" || sum.TotalCalls != 3 ||
		sum.SuccessfulCalls != 3 || sum.FailedCalls != 0 || sum.SuccessRate != 100 || sum.Truncated {
		t.Errorf("summary = %s", b)
	}
	if want := map[string]int{"http_request": 1, "echo": 1, "calculator": 1}; !reflect.DeepEqual(sum.ToolUsage, want) {
		t.Errorf("tool_usage = %v, want %v", sum.ToolUsage, want)
	}
	if len(sum.CallDetails) != 3 || sum.CallDetails[0].Tool != "http_request" {
		t.Fatalf("call_details, oldest first, should start with http_request: %s", b)
	}
	for _, d := range sum.CallDetails {
		if !d.OK || d.CallID == "" {
			t.Errorf("call detail %+v", d)
		}
	}
	status, brief := s.do("GET", "/v1/callers/tool_sub_agent_001/summary?brief=true", "")
	var got map[string]any
	if err := json.Unmarshal(brief, &got); status != 200 || err != nil {
		t.Fatalf("brief: %d %v %s", status, err, brief)
	}
	want := map[string]any{"total_calls": 3.0, "success_rate": 100.0, "has_errors": false,
		"tool_usage": map[string]any{"http_request": 1.0, "echo": 1.0, "calculator": 1.0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("brief = %s, want %v", brief, want)
	}
	return b
}

// loopbackAPI is the API the sub-agent's http_request reaches: a server
// on 127.0.0.1 answering {"answer":42}.
func loopbackAPI(t *testing.T) string {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"answer":42}`)
	}))
	t.Cleanup(api.Close)
	return api.URL
}

// A user of the REST API follows the sub-agent of section 3.1: its calls go
// to a server as calls of its caller ID, and the server sums them up from
// the records, the same after a restart, and on the command line.
func TestJourneySubAgentOverREST(t *testing.T) {
	api := loopbackAPI(t)
	u := newUser(t)
	u.copy("seeds/004/http_request.yaml", "tools/native/http_request.yaml")
	u.write("wield.yaml", "tool_dirs: [tools/native]\nhttp_allow: [127.0.0.1/32]\n")

	s := u.serve("--config", "wield.yaml")
	runSubAgent(t, s, api)
	before := checkSummary(t, s)

	r := u.must("stats", "--caller", "tool_sub_agent_001", "--server", s.url)
	for _, want := range []string{
		"caller tool_sub_agent_001 (parent conversation_agent_001): 3 calls, 3 ok, 0 failed (100.0% success)",
		"  calculator               1", "  echo                     1", "  http_request             1", "calls, oldest first:",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stats --caller --server: no %q in\n%s", want, r)
		}
	}

	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("after SIGTERM: exit %d in %v, want 0 within 5s\n%s", code, took, s.stderr)
	}

	s = u.serve("--config", "wield.yaml")
	after := checkSummary(t, s)
	if string(before) != string(after) {
		t.Errorf("the summary changed across the restart:\nbefore %s\nafter  %s", before, after)
	}
	r = u.must("stats", "--caller", "tool_sub_agent_001", "--brief", "--server", s.url)
	if want := "caller tool_sub_agent_001 (parent conversation_agent_001): 3 calls (100.0% success), no errors"; !strings.Contains(r.stdout, want) {
		t.Errorf("stats --caller --brief: no %q in\n%s", want, r)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("second server: exit %d\n%s", code, s.stderr)
	}

	// With no server, from the store on disk: the same summary.
	r = u.must("stats", "--caller", "tool_sub_agent_001", "--json")
	var local, remote any
	r.json(t, &local)
	if err := json.Unmarshal(after, &remote); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(local, remote) {
		t.Errorf("stats --caller --json differs from the server's answer:\nlocal  %s\nserver %s", r.stdout, after)
	}
	r = u.must("stats", "--caller", "tool_sub_agent_001")
	if !strings.Contains(r.stdout, "3 calls, 3 ok, 0 failed (100.0% success)") || strings.Count(r.stdout, "  ok  ") != 3 {
		t.Errorf("stats --caller:\n%s", r)
	}

	// A caller nobody used is said to have none (not "0 calls, … (0.0%
	// success)"); --brief alone is a usage error.
	r = u.must("stats", "--caller", "nobody")
	if strings.TrimSpace(r.stdout) != "caller nobody: no calls recorded" {
		t.Errorf("stats --caller nobody:\n%s", r)
	}
	if r = u.wield("stats", "--brief"); r.code != 2 || !strings.Contains(r.stderr, "--brief goes with --caller") {
		t.Errorf("stats --brief without --caller:\n%s", r)
	}
}

// Two servers sharing PostgreSQL: the sub-agent calls one, and the other
// answers its summary.
func TestJourneySubAgentAcrossServers(t *testing.T) {
	db := postgresURL(t)
	api := loopbackAPI(t)
	u := newUser(t)
	u.copy("seeds/004/http_request.yaml", "tools/native/http_request.yaml")
	u.write("wield.yaml", "tool_dirs: [tools/native]\nhttp_allow: [127.0.0.1/32]\n")
	a := u.serve("--config", "wield.yaml", "--db", db)
	b := u.serve("--config", "wield.yaml", "--db", db)
	runSubAgent(t, a, api)
	fromA, fromB := checkSummary(t, a), checkSummary(t, b)
	if string(fromA) != string(fromB) {
		t.Errorf("the servers disagree:\nA %s\nB %s", fromA, fromB)
	}
	r := u.must("stats", "--caller", "tool_sub_agent_001", "--db", db)
	if !strings.Contains(r.stdout, "3 calls, 3 ok, 0 failed (100.0% success)") {
		t.Errorf("stats --caller --db postgres:\n%s", r)
	}
}

// seed000Agents are seed 000's three agents (lead, search, crawl) as agent
// documents of a tool file, each with its required_tools in wield's names:
// the lead routes with call_subagent and may search and fetch itself.
const seed000Agents = `kind: agent
name: lead
description: Plans the research and hands parts of it to the other agents
tools: [call_subagent, web_search, web_fetch]
---
kind: agent
name: search
description: Searches the web
tools: [web_search]
---
kind: agent
name: crawl
description: Reads web pages and PDFs
tools: [web_fetch]
`

// TestJourneySubagentResearch: seed 000's lead, search and crawl agents,
// written as agent documents, validate and list; in wield chat --agent
// lead, the lead's call_subagent hands the task to the search agent, which
// runs on the model with its own toolkit (web_search alone) and searches;
// its answer is the call's result the lead reads, and the records show
// each agent's calls under its name.
func TestJourneySubagentResearch(t *testing.T) {
	brave, err := os.ReadFile(filepath.Join("..", "builtin", "testdata", "search", "brave.json"))
	if err != nil {
		t.Fatal(err)
	}
	searched := 0
	search, _ := loopbackServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		searched++
		w.Header().Set("Content-Type", "application/json")
		w.Write(brave)
	}))
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs: [agents]\nweb_search: {provider: brave, api_key: BSA-KEY, base_url: \""+search.URL+"/brave\"}\n")
	u.write("agents/seed000.yaml", seed000Agents)

	r := u.wield("validate", "--config", "wield.yaml", "agents")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "ok" || r.stderr != "" {
		t.Fatalf("validate: want ok and nothing else:\n%s", r)
	}
	r = u.must("list", "--config", "wield.yaml", "--agent", "lead")
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		listed[strings.Fields(line)[0]] = true
	}
	if len(listed) != 3 || !listed["call_subagent"] || !listed["web_search"] || !listed["web_fetch"] {
		t.Errorf("list --agent lead: want call_subagent, web_search and web_fetch:\n%s", r)
	}

	// The lead hands the task on; the search agent searches, then answers;
	// the lead answers with what it got back.
	model, _ := newFakeModel(t, "",
		reply(completion("", [2]string{"call_subagent", `{"agent_name":"search","instruction":"Find what wield is."}`})),
		reply(completion("", [2]string{"web_search", `{"query":"wield"}`})),
		reply(completion("wield is a tool engine for AI agents.")),
		reply(completion("According to the search agent, wield is a tool engine for AI agents.")),
	)
	r = u.wieldIn("What is wield?\n", "chat", "--config", "wield.yaml", "--agent", "lead", "--conversation", "seed000",
		"--model", model.srv.URL+"/v1/m")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "According to the search agent, wield is a tool engine for AI agents." {
		t.Fatalf("chat --agent lead: want the lead's answer:\n%s", r)
	}
	for _, line := range []string{`→ call_subagent {"agent_name":"search","instruction":"Find what wield is."}`, "← call_subagent ok", "\nsearch → web_search {\"query\":\"wield\"}\n", "\nsearch ← web_search ok\n"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, r.stderr)
		}
	}
	reqs := model.requests()
	if len(reqs) != 4 || searched != 1 {
		t.Fatalf("the model was asked %d times (want 4: lead, search, search, lead), the search provider %d (want 1)", len(reqs), searched)
	}
	offered := func(q chatRequest) []string {
		var ns []string
		for _, tl := range q.Tools {
			ns = append(ns, tl.Function.Name)
		}
		slices.Sort(ns)
		return ns
	}
	if got := offered(reqs[0]); !slices.Equal(got, []string{"call_subagent", "web_fetch", "web_search"}) {
		t.Errorf("the lead was offered %v", got)
	}
	for _, i := range []int{1, 2} {
		if got := offered(reqs[i]); !slices.Equal(got, []string{"web_search"}) {
			t.Errorf("the search agent (request %d) was offered %v, want its toolkit: web_search", i, got)
		}
	}
	if q := reqs[1]; len(q.Messages) != 1 || q.Messages[0].Role != "user" || q.text(0) != "Find what wield is." {
		t.Errorf("the search agent was not handed the instruction alone: %+v", q.Messages)
	}
	last := len(reqs[3].Messages) - 1
	var got struct {
		AgentName string `json:"agent_name"`
		Answer    string `json:"answer"`
	}
	if m := reqs[3].Messages[last]; m.Role != "tool" || json.Unmarshal([]byte(reqs[3].text(last)), &got) != nil ||
		got.AgentName != "search" || got.Answer != "wield is a tool engine for AI agents." {
		t.Errorf("the lead read the call_subagent result as %q", reqs[3].text(last))
	}

	// The records: the lead's call_subagent and the search agent's
	// web_search, in the one conversation, each under its agent's name.
	var page struct {
		Records []struct {
			Call struct {
				Tool   string `json:"tool"`
				Caller struct {
					ID             string `json:"id"`
					ConversationID string `json:"conversation_id"`
				} `json:"caller"`
			} `json:"call"`
			Result struct {
				OK bool `json:"ok"`
			} `json:"result"`
		} `json:"records"`
	}
	u.must("calls", "--conversation", "seed000", "--json").json(t, &page)
	var seen []string
	for _, rec := range page.Records {
		if !rec.Result.OK || rec.Call.Caller.ConversationID != "seed000" {
			t.Errorf("record %+v", rec)
		}
		seen = append(seen, rec.Call.Caller.ID+":"+rec.Call.Tool)
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"lead:call_subagent", "search:web_search"}) {
		t.Errorf("the records are %v, want lead:call_subagent and search:web_search", seen)
	}
}
