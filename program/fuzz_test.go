package program_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/program"
)

// FuzzRun: no program crashes the interpreter or the sandbox's rewrite,
// and every failure is a *wield.Error (a result for the model, never an
// internal error).
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		"result = add(a=1, b=2)",
		"s = 'x'\nfor i in range(10):\n    s += s\nresult = len(s)",
		"l = [1, 2] * 3\nl += [4]\nresult = '%s-%d' % ('a', 1) + ','.join(['a', 'b']).replace('a', 'c')",
		"def f(x, y=1, *a, **k):\n    return [x for x in a if x] or {k: v for k, v in k.items()}\nresult = f(1, 2, 3, z=4)",
		"result = (lambda x: x[1:2:1])('abc') if True else None",
		"x = {'a': [1, (2, 3)]}\nx['a'][0] *= 10\nresult = json.encode(x)",
		"while True:\n    pass",
		"print(str(range(3)), repr(sorted([3, 1])), list(zip([1], [2])))",
		"call('add', {'a': 'x'})",
	} {
		f.Add(seed)
	}
	s := newSetup(f, program.Options{MaxSteps: 20000, MaxCalls: 5, MaxValue: 1 << 16, MaxPrint: 1 << 10})
	f.Fuzz(func(t *testing.T, code string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := program.Run(ctx, code, program.Options{Invoker: s.eng, Registry: s.reg, MaxSteps: 20000, MaxCalls: 5, MaxValue: 1 << 16, MaxPrint: 1 << 10})
		var werr *wield.Error
		if err != nil && !errors.As(err, &werr) {
			t.Fatalf("error %T %v is not a *wield.Error", err, err)
		}
	})
}
