package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
)

// A tool served by a [Server] can talk to the MCP client while it runs:
// report progress, send log messages, ask the user for input and ask the
// client's model for a completion. The functions below find the MCP
// request in the handler's context (the engine passes the caller's context
// values on to handlers); called from a tool that was not called over MCP,
// [Log], [Elicit] and [Sample] fail with [ErrNotMCP] ([Progress] does
// nothing), and when the client cannot do what is asked, with
// [ErrUnsupported].
//
// A client of MCP 2026-07-28 (no session) that declared elicitation or
// sampling is asked in the protocol: the request is answered
// input_required with the question, and [Elicit] or [Sample] returns when
// the client's retry brings the answer, the call parked meanwhile on this
// server (era_ask.go); after that first question the request that brought
// the call is gone, so [Progress] and [Log] send nothing more.

var (
	// ErrNotMCP is returned by [Log], [Elicit] and [Sample] when the call did
	// not come from an MCP client.
	ErrNotMCP = errors.New("mcpbridge: the call did not come over MCP")
	// ErrUnsupported is returned by [Elicit] and [Sample] when the MCP client
	// did not declare the capability, or cannot be asked anything (a
	// stateless HTTP server).
	ErrUnsupported = errors.New("mcpbridge: the MCP client does not support it")
)

type srvRequestKey struct{}

// srvRequest is what the functions below need of a tools/call. The session
// is nil for a call answered on the fast path of a stateless server, which
// can send the client nothing but the result.
type srvRequest struct {
	session  *mcp.ServerSession
	params   *mcp.CallToolParamsRaw
	progress *srvProgress // when the client asked for progress (srvWithProgress)
}

func srvRequestFrom(ctx context.Context) *srvRequest {
	r, _ := ctx.Value(srvRequestKey{}).(*srvRequest)
	return r
}

// FromMCP reports whether the call running under ctx came from an MCP
// client of a [Server].
func FromMCP(ctx context.Context) bool { return srvRequestFrom(ctx) != nil }

// Progress tells how far the call has got: progress out of total (0 when
// unknown), with an optional message. It is [wield.ReportProgress]: an
// execution_progress event on the engine's bus (the REST API's event
// stream, the console), and, for a call from an MCP client that asked for
// progress (sent a progress token), a notifications/progress to that
// client. It returns nil when there is no client to tell, so tools can
// report progress unconditionally; otherwise the error of the send to the
// client.
func Progress(ctx context.Context, progress, total float64, message string) error {
	wield.ReportProgress(ctx, progress, total, message)
	if r := srvRequestFrom(ctx); r != nil && r.progress != nil {
		return r.progress.takeErr()
	}
	return nil
}

// srvProgress tells an MCP client the progress of its call: the engine
// passes each of the call's reports on to it (see [wield.ProgressKey]).
type srvProgress struct {
	ctx context.Context // the request's, as the server handed it to the engine
	r   *srvRequest

	mu  sync.Mutex
	err error // of the last send, for Progress
}

// srvWithProgress returns ctx with the reporter of the call's progress when
// its client asked for progress.
func srvWithProgress(ctx context.Context, r *srvRequest) context.Context {
	if r == nil || r.session == nil || r.params.GetProgressToken() == nil {
		return ctx
	}
	r.progress = &srvProgress{ctx: ctx, r: r}
	return context.WithValue(ctx, wield.ProgressKey, r.progress)
}

func (p *srvProgress) ReportProgress(progress, total float64, message string) {
	if srvEraGone(p.ctx) {
		return
	}
	err := p.r.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.r.params.GetProgressToken(),
		Progress: progress, Total: total, Message: message})
	if err != nil {
		err = fmt.Errorf("progress: %w", err)
	}
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

// takeErr returns the error of the last send, and forgets it.
func (p *srvProgress) takeErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.err
	p.err = nil
	return err
}

// LogLevel is the severity of a log message, as MCP (and syslog) name them.
type LogLevel = mcp.LoggingLevel

// The log levels, least severe first.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

// Log sends a log message (any JSON value) to the MCP client, under the
// tool's name. Messages below the level the client set with
// logging/setLevel are dropped, as are all messages before it set one. It
// returns [ErrNotMCP] outside an MCP call, or the transport's error.
func Log(ctx context.Context, level LogLevel, data any) error {
	r := srvRequestFrom(ctx)
	if r == nil {
		return fmt.Errorf("log: %w", ErrNotMCP)
	}
	if r.session == nil || srvEraGone(ctx) {
		return nil // no level set, so nothing is sent, as over the SDK
	}
	logger := ""
	if c := wield.CallFrom(ctx); c != nil {
		logger = c.Tool
	}
	if err := r.session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: logger, Data: data}); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

// The actions of an answer to [Elicit].
const (
	ActionAccept  = "accept"  // the user answered; the content holds the answer
	ActionDecline = "decline" // the user said no
	ActionCancel  = "cancel"  // the user dismissed the question
)

// Elicit asks the MCP client's user for input: message says what is asked,
// schema (a flat object of strings, numbers, booleans and enums, as MCP
// allows; nil for a plain confirmation) what to answer. It returns the
// answer and the user's action ([ActionAccept], [ActionDecline] or
// [ActionCancel]); the content is set only for accept and has been checked
// against schema. It returns [ErrNotMCP] outside an MCP call,
// [ErrUnsupported] when the client cannot elicit, or the client's error;
// for a client of 2026-07-28, [ErrNoAnswer] when it did not retry in time
// and [ErrTooManyWaiting] when the server holds too many such calls.
func Elicit(ctx context.Context, message string, schema *jsonschema.Schema) (map[string]any, string, error) {
	r := srvRequestFrom(ctx)
	if r == nil {
		return nil, "", fmt.Errorf("elicit: %w", ErrNotMCP)
	}
	if schema == nil {
		schema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	}
	p := &mcp.ElicitParams{Message: message, RequestedSchema: schema}
	if a := srvEraAskerFrom(ctx); a != nil && a.canElicit {
		return srvEraElicit(ctx, a, p, schema)
	}
	if !srvCanElicit(r.session) {
		srvEraMissing(ctx, "elicitation")
		return nil, "", fmt.Errorf("elicit: %w", ErrUnsupported)
	}
	res, err := r.session.Elicit(ctx, p)
	if err != nil {
		return nil, "", fmt.Errorf("elicit: %w", err)
	}
	if res.Action != ActionAccept {
		return nil, res.Action, nil
	}
	return res.Content, res.Action, nil
}

// srvCanElicit reports whether the session's client declared form
// elicitation. A stateless session has no initialisation and so no
// capabilities.
func srvCanElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if !srvCanAsk(ip) || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither means form, for older clients
}

// srvCanSample reports whether the session's client declared sampling.
func srvCanSample(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return srvCanAsk(ip) && ip.Capabilities.Sampling != nil
}

// srvCanAsk reports whether the server may send the client requests of its
// own during a call: the client declared capabilities, and its protocol
// predates 2026-07-28, which forbids such requests (a stateless server
// speaking it gets the client's capabilities with each request all the
// same).
func srvCanAsk(ip *mcp.InitializeParams) bool {
	return ip != nil && ip.Capabilities != nil && ip.ProtocolVersion < srvNoAskVersion
}

// srvNoAskVersion is the first MCP version whose requests forbid a server
// to ask the client anything in the middle of a call.
const srvNoAskVersion = "2026-07-28"

// SampleMessage is one message of a conversation sent to [Sample].
type SampleMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// Sampled is the client model's answer to [Sample].
type Sampled struct {
	Role       string
	Text       string // the text of the answer; empty when it was not text
	Model      string
	StopReason string
}

// Sample asks the MCP client's model to continue a conversation, with at
// most maxTokens tokens; the client may show the request to its user first.
// It returns [ErrNotMCP] outside an MCP call, [ErrUnsupported] when the
// client does not offer sampling, or the client's error (for a client of
// 2026-07-28, as [Elicit]).
func Sample(ctx context.Context, messages []SampleMessage, maxTokens int64) (Sampled, error) {
	r := srvRequestFrom(ctx)
	if r == nil {
		return Sampled{}, fmt.Errorf("sample: %w", ErrNotMCP)
	}
	a := srvEraAskerFrom(ctx)
	if (a == nil || !a.canSample) && !srvCanSample(r.session) {
		srvEraMissing(ctx, "sampling")
		return Sampled{}, fmt.Errorf("sample: %w", ErrUnsupported)
	}
	p := &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: make([]*mcp.SamplingMessage, len(messages))}
	for i, m := range messages {
		p.Messages[i] = &mcp.SamplingMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Text}}
	}
	if a != nil && a.canSample {
		return srvEraSample(ctx, a, p)
	}
	res, err := r.session.CreateMessage(ctx, p)
	if err != nil {
		return Sampled{}, fmt.Errorf("sample: %w", err)
	}
	out := Sampled{Role: string(res.Role), Model: res.Model, StopReason: res.StopReason}
	if t, ok := res.Content.(*mcp.TextContent); ok {
		out.Text = t.Text
	}
	return out, nil
}

// srvEraGone reports whether the call runs for a client of the stateless
// era that was answered input_required: the request that brought the call,
// and its stream, are gone.
func srvEraGone(ctx context.Context) bool {
	a := srvEraAskerFrom(ctx)
	return a != nil && a.answered.Load()
}
