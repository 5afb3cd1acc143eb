package program_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/program"
)

// BenchmarkInnerCall measures what a program adds to each tool call: the
// same number of add calls made directly on the engine (the reference of
// the same run) and from a program's loop. Per op is per inner call; the
// difference of the two is the interpreter's overhead.
func BenchmarkInnerCall(b *testing.B) {
	const perProgram = 1000
	s := newSetup(b, program.Options{MaxCalls: perProgram})
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			res, err := s.eng.Call(ctx, wield.Call{Tool: "add", Arguments: json.RawMessage(fmt.Sprintf(`{"a":%d,"b":1}`, i)), Caller: wield.Caller{Type: wield.CallerProgram}})
			if err != nil || !res.OK {
				b.Fatal(err, res.Error)
			}
		}
	})
	b.Run("program", func(b *testing.B) {
		b.ReportAllocs()
		args, _ := json.Marshal(program.Input{Code: fmt.Sprintf("for i in range(%d):\n    add(a=i, b=1)\n", perProgram)})
		for n := 0; n < b.N; n += perProgram {
			res, err := s.eng.Call(ctx, wield.Call{Tool: program.Name, Arguments: args})
			if err != nil || !res.OK {
				b.Fatal(err, res.Error)
			}
		}
	})
}
