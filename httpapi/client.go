package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
)

// Client is a Go client of the API. Its methods return an [*Error] for the
// server's error answers (check the Code), and other errors when the server
// could not be reached or answered something unreadable. A tool's failure is
// a result with OK false, not an error.
type Client struct {
	// BaseURL is the server's address, like "http://127.0.0.1:7420".
	BaseURL string
	// Key is the API key sent as a bearer token; empty sends none.
	Key string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

// NewClient returns a client of the server at baseURL with the key.
func NewClient(baseURL, key string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key}
}

// maxClientAnswer bounds an answer the client reads, and maxClientError an
// error answer: an export of 10,000 tools is a few megabytes, and a page of
// 1,000 records with 100 KB outputs each about 100 MB, so a server or proxy
// that sends more than 256 MiB, or an endless body, is refused rather than
// read whole into memory. Variables so that tests can lower them.
var (
	maxClientAnswer int64 = 256 << 20
	maxClientError  int64 = 64 << 10
)

// readAnswer reads resp's body: whole, up to maxClientAnswer, for a 2xx
// answer; the first maxClientError bytes of any other.
func readAnswer(resp *http.Response) ([]byte, error) {
	limit := maxClientAnswer
	if resp.StatusCode >= 300 {
		limit = maxClientError
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		if resp.StatusCode >= 300 {
			return b[:limit], nil
		}
		return nil, fmt.Errorf("the answer is larger than %d MiB, refused (where the command takes --limit, ask for fewer)", limit>>20)
	}
	return b, nil
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// Do sends a request with a JSON body (when in is not nil) and decodes a 2xx
// answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req)
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := readAnswer(resp)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return answerError(resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

func (c *Client) auth(req *http.Request) {
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
}

// answerError reads an error answer; one not in the API's shape is
// reported with its status.
func answerError(status int, b []byte) error {
	var eb errorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error != nil {
		eb.Error.Status = status
		return eb.Error
	}
	return &Error{Status: status, Code: http.StatusText(status), Message: strings.TrimSpace(string(b))}
}

// ToolQuery filters [Client.Tools]; empty fields do not filter.
type ToolQuery struct {
	Category string
	Tags     []string
	Toolset  string
	Agent    string
	// Deferred, Load and Namespaces are [ExportOptions], for
	// [Client.Export] only; Namespaces asks the server to group by its
	// toolsets.
	Deferred   bool
	Load       []string
	Namespaces bool
}

func (q ToolQuery) values() url.Values {
	v := url.Values{}
	set(v, "category", q.Category)
	set(v, "toolset", q.Toolset)
	set(v, "agent", q.Agent)
	if q.Deferred {
		v.Set("deferred", "true")
	}
	if len(q.Load) > 0 {
		v.Set("load", strings.Join(q.Load, ","))
	}
	if q.Namespaces {
		v.Set("namespaces", "true")
	}
	for _, t := range q.Tags {
		v.Add("tag", t)
	}
	return v
}

func set(v url.Values, k, s string) {
	if s != "" {
		v.Set(k, s)
	}
}

func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// Tools lists the tools the key reaches.
func (c *Client) Tools(ctx context.Context, q ToolQuery) ([]ToolInfo, error) {
	var out ToolList
	err := c.Do(ctx, "GET", withQuery("/v1/tools", q.values()), nil, &out)
	return out.Tools, err
}

// Export returns the tools in a format, one of [ExportFormats]: the
// server's document as it is, with the problems of the tools left out.
func (c *Client) Export(ctx context.Context, format string, q ToolQuery) (*Export, error) {
	v := q.values()
	v.Set("format", format)
	path := withQuery("/v1/tools", v)
	req, err := http.NewRequestWithContext(ctx, "GET", c.BaseURL+path, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	c.auth(req)
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := readAnswer(resp)
	if err != nil {
		return nil, fmt.Errorf("GET %s: read answer: %w", path, err)
	}
	if resp.StatusCode >= 300 {
		return nil, answerError(resp.StatusCode, b)
	}
	ps, err := exportProblems(resp.Header)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return &Export{Format: format, ContentType: resp.Header.Get("Content-Type"), Body: b, Problems: ps}, nil
}

// Tool describes one tool.
func (c *Client) Tool(ctx context.Context, name string) (*ToolInfo, error) {
	var out ToolInfo
	if err := c.Do(ctx, "GET", "/v1/tools/"+url.PathEscape(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Call calls a tool. The result says whether the tool succeeded.
func (c *Client) Call(ctx context.Context, tool string, req CallRequest) (*wield.Result, error) {
	var out wield.Result
	if err := c.Do(ctx, "POST", "/v1/tools/"+url.PathEscape(tool)+"/call", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DryRun asks what a call would do now, without running it
// (POST /v1/tools/{name}/call?dry_run=true).
func (c *Client) DryRun(ctx context.Context, tool string, req CallRequest) (*wield.DryRun, error) {
	var out wield.DryRun
	if err := c.Do(ctx, "POST", "/v1/tools/"+url.PathEscape(tool)+"/call?dry_run=true", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Batch calls several tools.
func (c *Client) Batch(ctx context.Context, req BatchRequest) ([]*wield.Result, error) {
	var out BatchResponse
	err := c.Do(ctx, "POST", "/v1/batch", req, &out)
	return out.Results, err
}

// CallRecord returns a recorded call.
func (c *Client) CallRecord(ctx context.Context, id string) (*CallRecord, error) {
	var out CallRecord
	if err := c.Do(ctx, "GET", "/v1/calls/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Calls returns a page of recorded calls, newest first.
func (c *Client) Calls(ctx context.Context, q wield.CallQuery) (*CallList, error) {
	v := url.Values{}
	set(v, "conversation", q.ConversationID)
	set(v, "tool", q.Tool)
	set(v, "caller", q.CallerID)
	set(v, "workflow", q.WorkflowID)
	set(v, "user", q.UserID)
	set(v, "status", q.Status)
	set(v, "cursor", q.Cursor)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out CallList
	if err := c.Do(ctx, "GET", withQuery("/v1/calls", v), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Summary summarises a conversation's calls.
func (c *Client) Summary(ctx context.Context, conversationID string) (*wield.Summary, error) {
	var out wield.Summary
	if err := c.Do(ctx, "GET", "/v1/conversations/"+url.PathEscape(conversationID)+"/summary", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CallerSummary returns the execution summary of a caller's recorded calls
// (a sub-agent's), from GET /v1/callers/{id}/summary; conversationID, when
// not empty, keeps one conversation's calls.
func (c *Client) CallerSummary(ctx context.Context, callerID, conversationID string) (*agent.ExecutionSummary, error) {
	v := url.Values{}
	set(v, "conversation", conversationID)
	var out agent.ExecutionSummary
	if err := c.Do(ctx, "GET", withQuery("/v1/callers/"+url.PathEscape(callerID)+"/summary", v), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CallerBrief returns the brief summary of a caller's recorded calls, from
// GET /v1/callers/{id}/summary?brief=true.
func (c *Client) CallerBrief(ctx context.Context, callerID, conversationID string) (*agent.BriefSummary, error) {
	v := url.Values{"brief": {"true"}}
	set(v, "conversation", conversationID)
	var out agent.BriefSummary
	if err := c.Do(ctx, "GET", withQuery("/v1/callers/"+url.PathEscape(callerID)+"/summary", v), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StatisticsSummary is the JSON form of [wield.Statistics], with latencies
// in milliseconds.
type StatisticsSummary struct {
	Overall    LatencySummary            `json:"overall"`
	Tools      map[string]LatencySummary `json:"tools"`
	Categories map[string]LatencySummary `json:"categories"`
}

// LatencySummary is the JSON form of [wield.LatencyStats].
type LatencySummary struct {
	Count       int64   `json:"count"`
	Failures    int64   `json:"failures"`
	SuccessRate float64 `json:"success_rate"`
	P50MS       float64 `json:"p50_ms"`
	P95MS       float64 `json:"p95_ms"`
	MaxMS       float64 `json:"max_ms"`
}

// Statistics returns counts and latencies of the recorded calls.
func (c *Client) Statistics(ctx context.Context, q wield.StatsQuery) (*StatisticsSummary, error) {
	v := url.Values{}
	set(v, "conversation", q.ConversationID)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	var out StatisticsSummary
	if err := c.Do(ctx, "GET", withQuery("/v1/statistics", v), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Toolsets lists the toolsets the key reaches.
func (c *Client) Toolsets(ctx context.Context) ([]wield.Toolset, error) {
	var out ToolsetList
	err := c.Do(ctx, "GET", "/v1/toolsets", nil, &out)
	return out.Toolsets, err
}

// Agents lists the agents and their tools.
func (c *Client) Agents(ctx context.Context) ([]Agent, error) {
	var out AgentList
	err := c.Do(ctx, "GET", "/v1/agents", nil, &out)
	return out.Agents, err
}

// Limiter returns the limiter's metrics.
func (c *Client) Limiter(ctx context.Context) (*LimiterMetrics, error) {
	var out LimiterMetrics
	if err := c.Do(ctx, "GET", "/v1/limiter", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Approvals lists approvals with the status: "" or pending, approved,
// denied, expired, all.
func (c *Client) Approvals(ctx context.Context, status string) ([]*wield.Approval, error) {
	v := url.Values{}
	set(v, "status", status)
	var out ApprovalList
	err := c.Do(ctx, "GET", withQuery("/v1/approvals", v), nil, &out)
	return out.Approvals, err
}

// Approval returns one approval.
func (c *Client) Approval(ctx context.Context, id string) (*wield.Approval, error) {
	var out wield.Approval
	if err := c.Do(ctx, "GET", "/v1/approvals/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Decide approves or denies a pending call; req.Digest must be the digest
// of the arguments decided on.
func (c *Client) Decide(ctx context.Context, id string, approve bool, req DecisionRequest) (*wield.Approval, error) {
	verb := "deny"
	if approve {
		verb = "approve"
	}
	var out wield.Approval
	if err := c.Do(ctx, "POST", "/v1/approvals/"+url.PathEscape(id)+"/"+verb, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateArtifact creates an artifact.
func (c *Client) CreateArtifact(ctx context.Context, req ArtifactCreate) (*wield.Artifact, error) {
	var out wield.Artifact
	if err := c.Do(ctx, "POST", "/v1/artifacts", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Artifact reads a version of an artifact; 0 is the latest.
func (c *Client) Artifact(ctx context.Context, id string, version int) (*wield.Artifact, error) {
	path := "/v1/artifacts/" + url.PathEscape(id)
	if version > 0 {
		path += "?version=" + strconv.Itoa(version)
	}
	var out wield.Artifact
	if err := c.Do(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateArtifact replaces the fragment old with new in a new version.
func (c *Client) UpdateArtifact(ctx context.Context, id, old, new string) (*wield.Artifact, error) {
	var out wield.Artifact
	if err := c.Do(ctx, "PATCH", "/v1/artifacts/"+url.PathEscape(id), ArtifactUpdate{Old: old, New: new}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RewriteArtifact replaces the whole content in a new version.
func (c *Client) RewriteArtifact(ctx context.Context, id, content string) (*wield.Artifact, error) {
	var out wield.Artifact
	if err := c.Do(ctx, "PUT", "/v1/artifacts/"+url.PathEscape(id), ArtifactRewrite{Content: content}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Parse finds the tool calls in a model's text.
func (c *Client) Parse(ctx context.Context, req ParseRequest) (*ParseResponse, error) {
	var out ParseResponse
	if err := c.Do(ctx, "POST", "/v1/parse", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EventQuery filters [Client.Events]; LastEventID resumes after an event
// (see [EventStream.Lost] for what a resume could not replay).
type EventQuery struct {
	Types          []string
	ConversationID string
	Tool           string
	LastEventID    string
}

// StreamEvent is one event of the stream as the client reads it.
type StreamEvent struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Time           time.Time       `json:"time"`
	Tool           string          `json:"tool,omitempty"`
	CallID         string          `json:"call_id,omitempty"`
	CallerID       string          `json:"caller_id,omitempty"`
	ConversationID string          `json:"conversation_id,omitempty"`
	ErrorType      wield.ErrorType `json:"error_type,omitempty"`
	Error          string          `json:"error,omitempty"`
	Attempts       int             `json:"attempts,omitempty"`
	Message        string          `json:"message,omitempty"`
	Source         string          `json:"source,omitempty"`
	DurationMS     float64         `json:"duration_ms,omitempty"`
	// Progress is the figures of an execution_progress event.
	Progress *wield.Progress `json:"progress,omitempty"`
}

// EventStream reads a stream of events; Close it when done.
type EventStream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
	lost int64
	gap  bool
}

// Events opens the event stream. The server has answered (and accepted the
// filters) when it returns.
func (c *Client) Events(ctx context.Context, q EventQuery) (*EventStream, error) {
	v := url.Values{}
	for _, t := range q.Types {
		v.Add("type", t)
	}
	set(v, "conversation", q.ConversationID)
	set(v, "tool", q.Tool)
	req, err := http.NewRequestWithContext(ctx, "GET", c.BaseURL+withQuery("/v1/events", v), nil)
	if err != nil {
		return nil, fmt.Errorf("open event stream: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if q.LastEventID != "" {
		req.Header.Set("Last-Event-ID", q.LastEventID)
	}
	c.auth(req)
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("open event stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := readAnswer(resp)
		resp.Body.Close()
		return nil, answerError(resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamEvent)
	return &EventStream{body: resp.Body, sc: sc}, nil
}

// Next returns the next event, skipping comments (heartbeats; the server's
// ": lost" notes are counted, see [EventStream.Lost]). It returns io.EOF when
// the server ends the stream.
func (s *EventStream) Next() (StreamEvent, error) {
	var data []byte
	for s.sc.Scan() {
		line := s.sc.Bytes()
		switch {
		case len(line) == 0:
			if data == nil {
				continue
			}
			var e StreamEvent
			if err := json.Unmarshal(data, &e); err != nil {
				return StreamEvent{}, fmt.Errorf("read event: %w", err)
			}
			return e, nil
		case bytes.HasPrefix(line, []byte("data: ")):
			if len(data)+len(line) > maxStreamEvent {
				return StreamEvent{}, fmt.Errorf("read event: larger than %d bytes (data lines with no blank line after them)", maxStreamEvent)
			}
			data = append(data, line[len("data: "):]...)
		case bytes.HasPrefix(line, []byte(": lost")):
			n, err := strconv.ParseInt(string(bytes.TrimSpace(line[len(": lost"):])), 10, 64)
			if err != nil || n <= 0 {
				s.gap = true
			} else {
				s.lost += n
			}
		}
	}
	if err := s.sc.Err(); err != nil {
		return StreamEvent{}, fmt.Errorf("read event: %w", err)
	}
	return StreamEvent{}, io.EOF
}

// maxStreamEvent bounds an event the client reads, its data lines together.
const maxStreamEvent = 4 << 20

// Lost reports what the stream has said it could not deliver so far: n
// events counted by the server (the client fell behind), and gap when the
// server could not tell how many it missed (it resumed after an event it
// does not hold: one from before a restart, or from another server).
func (s *EventStream) Lost() (n int64, gap bool) { return s.lost, s.gap }

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// Ready asks /readyz whether the server and its store answer.
func (c *Client) Ready(ctx context.Context) error {
	return c.Do(ctx, "GET", "/readyz", nil, nil)
}
