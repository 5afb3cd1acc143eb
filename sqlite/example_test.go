package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "wield-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// Open creates the file, and the directory if needed.
	s, err := sqlite.Open(ctx, filepath.Join(dir, "data", "wield.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close(ctx)

	// The engine records every call in the store before it returns.
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("echo", "Echo a message", echo))
	e := engine.New(reg, &engine.Options{Store: s})
	caller := wield.ForConversation("agent", "conv-1")
	// Records list newest first by call ID. The engine's IDs sort by time to
	// the millisecond (in random order within one); calls made in the same
	// millisecond keep their order only with IDs of the caller's own.
	for i, args := range []string{`{"message":"hello"}`, `{"message":"world"}`, `{"text":"oops"}`} {
		id := fmt.Sprintf("call-%d", i+1)
		if _, err := e.Call(ctx, wield.Call{ID: id, Tool: "echo", Arguments: json.RawMessage(args), Caller: caller}); err != nil {
			fmt.Println(err)
			return
		}
	}

	page, err := s.Calls(ctx, wield.CallQuery{ConversationID: "conv-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range page.Records { // newest first
		if r.Result.OK {
			fmt.Println(r.Call.Tool, string(r.Call.Arguments), "->", string(r.Output()))
		} else {
			fmt.Println(r.Call.Tool, string(r.Call.Arguments), "->", r.Result.ErrorType)
		}
	}
	sum, err := s.Summary(ctx, "conv-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(sum.Brief())
	fmt.Println(string(b))
	// Output:
	// echo {"text":"oops"} -> validation_error
	// echo {"message":"world"} -> {"message":"world"}
	// echo {"message":"hello"} -> {"message":"hello"}
	// {"total_calls":3,"success_rate":66.66666666666667,"tool_usage":{"echo":3},"has_errors":true}
}
