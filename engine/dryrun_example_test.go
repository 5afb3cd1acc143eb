package engine_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

func ExampleEngine_DryRun() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("greet", "Greet someone", greet))
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	ctx := context.Background()

	// What the call would do, with "2" coerced; greet does not run.
	d, err := e.DryRun(ctx, wield.Call{Tool: "greet", Arguments: json.RawMessage(`{"name":"Ada","times":"2"}`)})
	if err != nil {
		fmt.Println("system failure:", err)
		return
	}
	fmt.Println(d.WouldRun, string(d.Arguments), d.Permission, d.Limit.Outcome, d.Timeout, d.TimeoutFrom)

	// A call that would fail gets the answer the call would get.
	d, _ = e.DryRun(ctx, wield.Call{Tool: "greet", Arguments: json.RawMessage(`{"Name":"Ada"}`)})
	fmt.Println(d.WouldRun, d.Stage, d.ErrorType)
	// Output:
	// true {"name":"Ada","times":2} auto run 30s default
	// false validation validation_error
}
