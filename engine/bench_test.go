package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

type benchIn struct {
	Message string `json:"message" description:"The text to send back"`
}

type benchOut struct {
	Message string `json:"message"`
}

func benchEcho(_ context.Context, in benchIn) (benchOut, error) { return benchOut(in), nil }

var benchArgs = json.RawMessage(`{"message":"hello, world"}`)

// BenchmarkFloor is the least any engine must do for one call: decode the
// arguments, call the function, encode the output.
func BenchmarkFloor(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		var in benchIn
		if err := json.Unmarshal(benchArgs, &in); err != nil {
			b.Fatal(err)
		}
		out, err := benchEcho(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEngineCall is one echo call through the whole engine: lookup,
// strict decoding, coercion and validation, policy, the concurrency
// controller, the handler under its timeout, the output budget, a record
// hook, and events to a live subscriber. "isolated" runs the handler on one
// of the engine's workers (the default, which keeps the timeout even for a
// handler that ignores its context); "inline" runs it on the caller's
// goroutine, as Tool.Inline allows for pure functions such as echo.
func BenchmarkEngineCall(b *testing.B) {
	for _, inline := range []bool{false, true} {
		name := "isolated"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			bus := wield.NewBus(0)
			reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
			tool := wield.Func("echo", "Echo a message", benchEcho)
			tool.Inline = inline
			reg.MustRegister(tool)
			sub := bus.Subscribe(nil)
			defer sub.Close()
			go func() {
				for {
					if _, err := sub.Next(context.Background()); err != nil {
						return
					}
				}
			}()
			e := engine.New(reg, &engine.Options{Store: discard{}})
			defer e.Close(context.Background())
			ctx := context.Background()
			call := wield.Call{Tool: "echo", Arguments: benchArgs, Caller: wield.ForConversation("agent", "conv")}
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Call(ctx, call)
				if err != nil || !res.OK {
					b.Fatal(err, res.Error)
				}
			}
		})
	}
}

// BenchmarkEngineCallParallel is the same call from as many goroutines as
// GOMAXPROCS, under the default limit of 10 at once.
func BenchmarkEngineCallParallel(b *testing.B) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(wield.Func("echo", "Echo a message", benchEcho))
	e := engine.New(reg, &engine.Options{Store: discard{}})
	call := wield.Call{Tool: "echo", Arguments: benchArgs}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			res, err := e.Call(ctx, call)
			if err != nil || !res.OK {
				b.Fatal(err, res.Error)
			}
		}
	})
}

// discard is a store that keeps nothing, so the benchmark measures the
// engine rather than a store.
type discard struct{}

func (discard) Save(context.Context, *wield.Record) error { return nil }
