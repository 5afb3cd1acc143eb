package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// TestRefusedArgumentsRecordBounded: a call refused because its arguments
// are over MaxArguments is recorded with the head of what it sent, not all
// of it: a model (or client) sending 50 MB every turn would otherwise write
// 50 MB to the store every turn. The result's metadata says how many bytes
// were sent; a call within the limit keeps its raw arguments whole.
func TestRefusedArgumentsRecordBounded(t *testing.T) {
	echo := wield.Func("echo", "Echo", func(_ context.Context, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{Store: store, MaxArguments: 1 << 20}, echo)
	huge := `{"message":"` + strings.Repeat("x", 5<<20) + `"}`
	res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(huge)})
	if res.OK || res.ErrorType != wield.ErrValidation || res.Metadata["arguments_bytes"] != len(huge) {
		t.Fatalf("got ok=%v %s metadata %v, want validation_error with arguments_bytes %d", res.OK, res.ErrorType, res.Metadata, len(huge))
	}
	small := `{"message":"kept whole"}`
	mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(small)})
	recs := store.Records(memstore.Filter{})
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		raw := string(r.Call.Arguments)
		switch {
		case r.Result.OK && raw != small:
			t.Errorf("the record of a call within the limit keeps %q, want %q", raw, small)
		case !r.Result.OK:
			var head string
			if err := json.Unmarshal(r.Call.Arguments, &head); err != nil {
				t.Fatalf("the record of the refused call keeps %.100q, not a JSON string: %v", raw, err)
			}
			head, cut := strings.CutSuffix(head, "…")
			if !cut || len(head) == 0 || len(head) > engine.RecordedRefusedArguments || !strings.HasPrefix(huge, head) {
				t.Errorf("the record of the refused call keeps %d bytes of its arguments (cut: %v), want their first %d at most, then …", len(head), cut, engine.RecordedRefusedArguments)
			}
		}
	}
}
