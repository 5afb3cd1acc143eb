package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// A tool that fails with 10 MB of text (issue 19: an MCP server's isError
// result of 10 MB reached the CLI and the REST body whole) gets its message
// cut to the output budget, head and tail kept, as an output would be.
func TestBudgetError(t *testing.T) {
	big := strings.Repeat("H", 5<<20) + strings.Repeat("T", 5<<20)
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{MaxOutput: 4096, Store: store},
		rawTool("fails", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, &wield.Error{Type: wield.ErrExecution, Message: big}
		}),
		rawTool("small", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, &wield.Error{Type: wield.ErrExecution, Message: "short"}
		}))
	res := mustCall(t, e, wield.Call{Tool: "fails"})
	if res.OK || res.ErrorType != wield.ErrExecution {
		t.Fatalf("%+v", failureOf(res))
	}
	if len(res.Error) > 4096 || !strings.HasPrefix(res.Error, "HHHH") || !strings.HasSuffix(res.Error, "TTTT") || !strings.Contains(res.Error, "bytes cut here") {
		t.Errorf("Error of %d bytes: %.100q…", len(res.Error), res.Error)
	}
	if res.Metadata["error_truncated"] != true || res.Metadata["original_error_bytes"] != len(big) {
		t.Errorf("Metadata %v, want error_truncated and original_error_bytes %d", res.Metadata, len(big))
	}
	if recs := store.Records(memstore.Filter{}); len(recs) != 1 || len(recs[0].Result.Error) > 4096 {
		t.Errorf("the record keeps a message over the budget")
	}
	if res := mustCall(t, e, wield.Call{Tool: "small"}); res.Error != "short" || res.Metadata != nil {
		t.Errorf("a short message changed: %q %v", res.Error, res.Metadata)
	}
}

// Checking arguments honours the call's deadline: a costly uniqueItems
// check of a call whose deadline has passed ends as a timeout, and so does
// one that outlasts the call's own timeout (1 ms, counted from the call's
// arrival, against a check of 100,000 items); the handler never runs.
func TestDecodeDeadline(t *testing.T) {
	ran := false
	tool := wield.Raw("uniq", "unique items",
		&jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"xs": {Type: "array", UniqueItems: true}}},
		wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			ran = true
			return json.RawMessage("null"), nil
		}))
	e := newEngine(t, nil, tool)
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := range 100000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", i)
	}
	b.WriteString(`]}`)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	res, err := e.Call(ctx, wield.Call{Tool: "uniq", Arguments: json.RawMessage(b.String())})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrTimeout || ran {
		t.Errorf("%+v (ran %v), want a timeout before the handler", failureOf(res), ran)
	}
	if res := mustCall(t, e, wield.Call{Tool: "uniq", Timeout: time.Millisecond, Arguments: json.RawMessage(b.String())}); res.OK || res.ErrorType != wield.ErrTimeout || ran {
		t.Errorf("1 ms timeout: %+v (ran %v), want a timeout before the handler", failureOf(res), ran)
	}
	if res := mustCall(t, e, wield.Call{Tool: "uniq", Arguments: json.RawMessage(b.String())}); !res.OK || !ran {
		t.Errorf("without a deadline: %+v", failureOf(res))
	}
}
