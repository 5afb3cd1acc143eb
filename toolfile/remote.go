package toolfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/wieldhq/wield"
)

// remoteEntry is `entry: {type: remote, ...}`: a tool of another wield
// server, called through its REST API.
type remoteEntry struct {
	// URL is the other server's address, such as http://tools.internal:7420.
	URL string `json:"url"`
	// Tool is the tool's name there; the definition's name when empty.
	Tool string `json:"tool"`
	// APIKeyEnv names the environment variable holding the key to send.
	APIKeyEnv string `json:"api_key_env"`
	// Timeout bounds one call ("30s"); the tool's own timeout when empty.
	Timeout string `json:"timeout"`
}

// RemoteKind is the `remote` entry type: the tool runs on another wield
// server (`POST {url}/v1/tools/{tool}/call`), which validates, limits and
// records it as its own; this server validates it too, with the schema of
// the file. The URL is the operator's, not the model's, so it is not put
// behind the SSRF guard: internal servers are the point.
//
// The remote tool's failures come back with their own error type and
// message; the remote server's refusals (401, 403, 404) are
// execution_error naming the status, and its 5xx and 429 are transient, so
// an idempotent tool is retried. The key, when api_key_env names one, is
// read at each call, so it can be rotated without a reload.
func RemoteKind() Kind {
	client := &http.Client{}
	return KindFunc(func(_ context.Context, def *Def) (wield.Handler, error) {
		var e remoteEntry
		if err := def.Entry.decodeValues(&e); err != nil {
			return nil, fmt.Errorf("remote entry: %w", err)
		}
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("remote entry: url %q is not an http(s) URL of a wield server", e.URL)
		}
		if e.Tool == "" {
			e.Tool = def.Name
		}
		var timeout time.Duration
		if e.Timeout != "" {
			if timeout, err = time.ParseDuration(e.Timeout); err != nil || timeout <= 0 {
				return nil, fmt.Errorf("remote entry: timeout %q is not a positive duration like \"30s\"", e.Timeout)
			}
		}
		endpoint := strings.TrimSuffix(e.URL, "/") + "/v1/tools/" + url.PathEscape(e.Tool) + "/call"
		return wield.HandlerFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, timeout, errRemoteTimeout)
				defer cancel()
			}
			out, err := callRemote(ctx, client, endpoint, e, args)
			if err != nil && errors.Is(context.Cause(ctx), errRemoteTimeout) {
				// The entry's own timeout, not the caller's: a timeout like
				// the engine's, not a failure of the other server.
				return nil, &wield.Error{Type: wield.ErrTimeout, Err: err,
					Message: fmt.Sprintf("the remote tool %s did not answer within %s (the entry's timeout)", e.Tool, timeout)}
			}
			return out, err
		}), nil
	})
}

// errRemoteTimeout is the cause of a remote entry's own timeout.
var errRemoteTimeout = errors.New("remote entry timeout")

func callRemote(ctx context.Context, client *http.Client, endpoint string, e remoteEntry, args json.RawMessage) (json.RawMessage, error) {
	body := map[string]any{"arguments": args}
	if c := wield.CallFrom(ctx); c != nil {
		// The other server records the call under the same conversation
		// (with an id of its own: the two may share a store).
		caller := c.Caller
		if caller.Type == wield.CallerWorkflowNode {
			// A workflow node's bypass of the concurrency limits is this
			// server's to give: the other server limits the call like any
			// other (and refuses the claim from a key without the workflow
			// right, which would fail the call).
			caller.Type = ""
		}
		body["caller"] = caller
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	wield.InjectTrace(ctx, req.Header.Set) // the call's trace goes on at the other server
	if e.APIKeyEnv != "" {
		key := os.Getenv(e.APIKeyEnv)
		if key == "" {
			return nil, wield.Errorf(wield.ErrExecution, "the key for the remote tool %s is missing: set %s", e.Tool, e.APIKeyEnv)
		}
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, wield.Transient(&wield.Error{Type: wield.ErrExecution, Err: err,
			Message: fmt.Sprintf("the wield server of remote tool %s cannot be reached", e.Tool)})
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, wield.Transient(&wield.Error{Type: wield.ErrExecution, Err: err, Message: fmt.Sprintf("the answer of remote tool %s was cut off", e.Tool)})
	}
	if resp.StatusCode != http.StatusOK {
		var apiErr struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := http.StatusText(resp.StatusCode)
		if json.Unmarshal(answer, &apiErr) == nil && apiErr.Error.Message != "" {
			msg = apiErr.Error.Message
		}
		err := &wield.Error{Type: wield.ErrExecution, Message: fmt.Sprintf("the wield server of remote tool %s answered %d: %s", e.Tool, resp.StatusCode, msg)}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, wield.Transient(err)
		}
		return nil, err
	}
	var res struct {
		OK        bool            `json:"ok"`
		Output    json.RawMessage `json:"output"`
		Error     string          `json:"error"`
		ErrorType wield.ErrorType `json:"error_type"`
	}
	if err := json.Unmarshal(answer, &res); err != nil {
		return nil, &wield.Error{Type: wield.ErrExecution, Err: err, Message: fmt.Sprintf("the answer of remote tool %s is not a wield result", e.Tool)}
	}
	if !res.OK {
		t := res.ErrorType
		if t == "" {
			t = wield.ErrExecution
		}
		return nil, &wield.Error{Type: t, Message: res.Error}
	}
	if len(res.Output) == 0 {
		return json.RawMessage("null"), nil
	}
	return res.Output, nil
}
