package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/safetext"
)

func (a *app) callCommand() *cobra.Command {
	var rawArgs, conversation, id, idempotencyKey, user, agent string
	var timeout time.Duration
	var priority int
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "call NAME [key=value | key:=JSON ...]",
		Short: "Call a tool and print its result as JSON",
		Long: `Call a tool through the whole engine (validation, permissions, limits, timeout)
and print the result as one JSON object.

Arguments come from --args as a JSON object, or as key=value pairs (the value is
a string; the engine coerces "5" to 5 where the schema wants a number) and
key:=JSON pairs (the value is JSON: n:=5, tags:='["a","b"]').

A tool with the confirm permission asks on a terminal (the tool, its arguments,
[y/N]), and the answer is the recorded decision; elsewhere stderr names the
pending approval and the 'wield approvals approve ID' command that gives it.

On a terminal, a call that runs more than a second shows a line with how long
it has run and the newest progress its tool reported; with --server the figures
come from the server's event stream (/v1/events), for which the command names
the call itself (an ID "cli-...", the call_id of its result).

With --dry-run the tool does not run: the call goes through the engine's steps up
to the tool (lookup, validation, idempotent replay, permission, approval,
limiter) and a report says what it would do now: the arguments as the tool would
get them, whether it would wait for approval and who would decide, the limiter's
bucket with what is in flight and queued, the timeout and the retries. Nothing
is recorded, no approval is asked for. --json prints the report as JSON.

Exit code 0 when the call succeeded (with --dry-run: would run), 1 when it
failed (would not run), 2 for usage errors.`,
		Example: `  wield call echo message=hello
  wield call calculator --args '{"expression":"2 * (3 + 4)"}'
  wield call current_time timezone=Europe/Paris
  wield call delete_file path=notes.txt --dry-run`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			args, err := buildArgs(rawArgs, cmd.Flags().Changed("args"), argv[1:])
			if err != nil {
				return err
			}
			if timeout < 0 {
				return usagef("--timeout %s is negative", timeout)
			}
			if wield.LooksLikeNewID(id) {
				return usagef("--id %q has the shape of the IDs wield makes (27 lowercase base32 characters): choose one of another shape (a prefix will do), or leave --id out", id)
			}
			caller := wield.Caller{ID: "cli", Type: wield.CallerDirect, ConversationID: conversation, UserID: user}
			c := wield.Call{ID: id, Tool: argv[0], Arguments: args, Caller: caller, Timeout: timeout, Priority: priority, IdempotencyKey: idempotencyKey}
			if dryRun {
				return a.dryRun(cmd.Context(), c, agent, asJSON)
			}
			if cl := a.client(); cl != nil {
				req := callRequest(c, agent)
				ctx, stop := a.progress(cmd.Context(), argv[0])
				if rep, ok := ctx.Value(wield.ProgressKey).(*lineReport); ok {
					if req.ID == "" {
						req.ID = "cli-" + wield.NewID()
					}
					stop = a.followProgress(ctx, cl, argv[0], req, rep, stop)
				}
				res, err := cl.Call(cmd.Context(), argv[0], req)
				stop()
				if err != nil {
					return err
				}
				return a.printResult(res)
			}
			a.askApprovals(true)
			return a.withStore(cmd.Context(), func(store wield.Storage) error {
				reg, eng, err := a.setup(store)
				if err != nil {
					return err
				}
				defer eng.Close(context.WithoutCancel(cmd.Context()))
				if c.Toolkit, err = agentToolkit(reg, agent); err != nil {
					return err
				}
				ctx, stop := a.progress(cmd.Context(), argv[0])
				res, err := eng.Call(ctx, c)
				stop()
				if err != nil {
					if res != nil {
						_ = a.printResult(res)
					}
					return err
				}
				return a.printResult(res)
			})
		},
	}
	cmd.Flags().StringVar(&rawArgs, "args", "", "the arguments as a JSON object")
	cmd.Flags().StringVar(&conversation, "conversation", "", "conversation ID to record the call under")
	cmd.Flags().StringVar(&id, "id", "", "an ID of your own for the call, refused if another call has it (recorded, running or waiting for approval)")
	cmd.Flags().StringVar(&idempotencyKey, "idempotency-key", "", "a call repeated with this key answers with the first successful one's result, without running again")
	cmd.Flags().IntVar(&priority, "priority", 0, "the call's priority where the limiter orders waiting calls by priority (higher first)")
	cmd.Flags().StringVar(&user, "user", "", "the user the call is made for (caller.user_id: records, and the principal of Cedar policies)")
	cmd.Flags().StringVar(&agent, "agent", "", "call as this agent: only the tools of its toolkit")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "timeout of the call (default: the tool's, else 30s, 60s for network tools)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "do not run the tool: report what the call would do now (nothing recorded, no approval asked for)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --dry-run: print the report as JSON (a call's result is JSON already)")
	return cmd
}

// printResult prints a call's result as one JSON object; a failed call
// exits 1.
func (a *app) printResult(res *wield.Result) error {
	if err := a.printJSON(res); err != nil {
		return err
	}
	if !res.OK {
		return exitError{1}
	}
	return nil
}

// printJSON prints v as indented JSON for a person (or a model reading the
// output), through internal/jsonenc: <, > and & as they are, never escaped
// for HTML.
func (a *app) printJSON(v any) error {
	b, err := jsonenc.MarshalIndent(v, "  ")
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(append(b, '\n'))
	return err
}

// progress shows, on a terminal, how long a call has been running once it
// takes more than a second, with the newest progress its tool reported
// (when it runs here: the returned context takes the reports); the
// returned function stops it and clears the line. Elsewhere (a pipe, a
// file, a test) it shows nothing.
func (a *app) progress(ctx context.Context, tool string) (context.Context, func()) {
	f, ok := a.stderr.(*os.File)
	if !ok {
		return ctx, func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return ctx, func() {}
	}
	rep := &lineReport{}
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(f, "\r\033[K")
				}
				return
			case <-t.C:
				if d := time.Since(start); d > time.Second && !a.asking.Load() {
					fmt.Fprintf(f, "\r\033[K%s running… %s%s", safetext.Line(tool), d.Round(time.Second), rep.text())
					shown = true
				}
			}
		}
	}()
	return context.WithValue(ctx, wield.ProgressKey, rep), func() { close(done); <-finished }
}

// followProgress passes the progress the server publishes of the call req
// (GET /v1/events: its execution_progress events, found by the call ID the
// request chose) to the progress line, as a local call's reports reach it;
// the returned function stops reading and then stop. The stream is open,
// and the server listening on the bus, before the call is sent, so none of
// the call's events is missed, unless the server takes longer than
// progressOpenWait to answer it: the call does not wait longer for its
// progress line, and the stream is read from when it opens. Every key may
// read the events of the tools it may call (a scoped key, those of its
// toolsets; the policies hide no event of a call they let it make). A
// server whose events cannot be read (none published, an answer that is
// not a stream) leaves the line with the time only, as before.
func (a *app) followProgress(ctx context.Context, c *httpapi.Client, tool string, req httpapi.CallRequest, rep *lineReport, stop func()) func() {
	ctx, cancel := context.WithCancel(ctx)
	opened := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		events, err := c.Events(ctx, httpapi.EventQuery{Types: []string{string(wield.EventExecutionProgress)}, Tool: tool, ConversationID: req.Caller.ConversationID})
		close(opened)
		if err != nil {
			return
		}
		defer events.Close()
		for {
			e, err := events.Next()
			if err != nil {
				return
			}
			if e.CallID == req.ID && e.Progress != nil {
				rep.ReportProgress(e.Progress.Progress, e.Progress.Total, e.Message)
			}
		}
	}()
	wait := time.NewTimer(progressOpenWait)
	select {
	case <-opened:
	case <-wait.C:
	}
	wait.Stop()
	return func() {
		cancel() // ends the request, and with it a read of its body
		<-done
		stop()
	}
}

// progressOpenWait is how long a call waits for the server to open its
// event stream (a local server answers in a millisecond).
const progressOpenWait = time.Second

// lineReport keeps a call's newest progress report for the progress line.
type lineReport struct {
	mu   sync.Mutex
	line string
}

func (r *lineReport) ReportProgress(done, total float64, message string) {
	figures := strconv.FormatFloat(done, 'g', -1, 64)
	if total > 0 {
		figures += " of " + strconv.FormatFloat(total, 'g', -1, 64)
	}
	if message != "" {
		// A tool's words on a terminal: escapes shown, not obeyed; cut
		// so that the line stays one line, after the escapes, which
		// take up to six columns a character (cut before too, so that a
		// long message costs no more than a short one).
		figures += ": " + clipRunes(safetext.Line(clipRunes(message, progressWords)), progressWords)
	}
	r.mu.Lock()
	r.line = " (" + figures + ")"
	r.mu.Unlock()
}

func (r *lineReport) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.line
}

// progressWords is how many characters of a tool's progress message the
// progress line shows.
const progressWords = 60

// clipRunes cuts s to at most n characters, marking the cut.
func clipRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// buildArgs makes the arguments object from --args or key=value pairs.
func buildArgs(raw string, rawSet bool, pairs []string) (json.RawMessage, error) {
	if rawSet && len(pairs) > 0 {
		return nil, usagef("give the arguments either as --args JSON or as key=value pairs, not both")
	}
	if rawSet {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &obj); err != nil || obj == nil {
			return nil, usagef("--args must be a JSON object, like '{\"message\":\"hi\"}': %s", notObject(raw))
		}
		return json.RawMessage(raw), nil
	}
	// Keep the order of the pairs, so the record shows them as typed.
	var b strings.Builder
	b.WriteByte('{')
	seen := map[string]bool{}
	for i, p := range pairs {
		key, val, isJSON, err := splitPair(p)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, usagef("argument %q given twice", key)
		}
		seen[key] = true
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonenc.AppendString(nil, key))
		b.WriteByte(':')
		if isJSON {
			if !json.Valid([]byte(val)) {
				return nil, usagef("argument %s:= takes JSON, and %q is not JSON (for a string use %s=...)", key, val, key)
			}
			b.WriteString(val)
		} else {
			b.Write(jsonenc.AppendString(nil, val))
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}

func splitPair(p string) (key, val string, isJSON bool, err error) {
	i := strings.IndexByte(p, '=')
	if i <= 0 {
		return "", "", false, usagef("argument %q is not key=value or key:=JSON", p)
	}
	key, val = p[:i], p[i+1:]
	if strings.HasSuffix(key, ":") {
		key, isJSON = key[:len(key)-1], true
		if key == "" {
			return "", "", false, usagef("argument %q has no key", p)
		}
	}
	return key, val, isJSON, nil
}

// notObject says what raw, which is not a JSON object, is instead.
func notObject(raw string) string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return "it is not JSON (" + err.Error() + ")"
	}
	switch v.(type) {
	case nil:
		return "got null"
	case []any:
		return "got an array"
	case string:
		return "got a string"
	case float64:
		return "got a number"
	case bool:
		return "got a boolean"
	}
	return "got another JSON value"
}

// callRequest is the REST request of a call made with --server.
func callRequest(c wield.Call, agent string) httpapi.CallRequest {
	return httpapi.CallRequest{ID: c.ID, Arguments: c.Arguments, Caller: c.Caller, TimeoutMS: c.Timeout.Milliseconds(),
		Priority: c.Priority, IdempotencyKey: c.IdempotencyKey, Agent: agent}
}

// agentToolkit is the toolkit --agent names (nil without one), or an error
// naming the agents there are.
func agentToolkit(reg *wield.Registry, agent string) (*wield.Toolkit, error) {
	if agent == "" {
		return nil, nil
	}
	k, ok := reg.Toolkit(agent)
	if !ok {
		return nil, fmt.Errorf("--agent %q: no such agent in the tool folders (an agent is a file of kind: agent, naming its tools)", agent)
	}
	return k, nil
}
