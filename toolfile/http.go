package toolfile

import (
	"context"
	"fmt"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httptool"
)

// httpEntry is an `entry: {type: http, ...}` (seed 002's NativeTool, seed
// 004's http_request): the keys of httptool.Spec.
type httpEntry struct {
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Query       map[string]string `json:"query"`
	Headers     map[string]string `json:"headers"`
	Body        string            `json:"body"`
	AuthRaw     *httpAuth         `json:"auth"`
	Timeout     string            `json:"timeout"`
	MaxResponse int64             `json:"max_response"`
}

type httpAuth struct {
	Type string `json:"type"`
	In   string `json:"in"`
	Name string `json:"name"`
	Env  string `json:"env"`
}

// HTTPKind runs `entry: {type: http, method, url, query, headers, body,
// auth: {type, in, name, env}, timeout, max_response}` as a declarative HTTP
// tool (package httptool) behind guard; a nil guard refuses every internal
// address. Response headers named by secretNames (the configuration's
// secret_names), as well as the default secret names, are [REDACTED] in
// the output.
func HTTPKind(guard *httptool.Guard, secretNames ...string) Kind {
	return KindFunc(func(_ context.Context, def *Def) (wield.Handler, error) {
		var e httpEntry
		if err := def.Entry.decodeValues(&e); err != nil {
			return nil, fmt.Errorf("http entry: %w", err)
		}
		spec := httptool.Spec{Method: e.Method, URL: e.URL, Query: e.Query, Headers: e.Headers, Body: e.Body, MaxResponse: e.MaxResponse, SecretNames: secretNames}
		if e.AuthRaw != nil {
			spec.Auth = &httptool.Auth{Type: e.AuthRaw.Type, In: e.AuthRaw.In, Name: e.AuthRaw.Name, Env: e.AuthRaw.Env}
		}
		if e.Timeout != "" {
			d, err := time.ParseDuration(e.Timeout)
			if err != nil {
				return nil, fmt.Errorf("http entry: timeout %q: %w", e.Timeout, err)
			}
			spec.Timeout = d
		}
		t, err := httptool.New(def.Name, def.Description, def.InputSchema(), spec, guard)
		if err != nil {
			return nil, err
		}
		return t.Handler, nil
	})
}
