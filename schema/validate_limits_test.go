package schema

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// bigArray writes {"xs": [...]} of n items made by item.
func bigArray(n int, item func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// uniqueItems over 20,000 items (issue 19: 12.9 s past a 1 s timeout) is
// checked by hashes, finds a duplicate however it is written (1 and 1.0,
// members in another order, escapes), and passes distinct items.
func TestUniqueItemsMany(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"xs":{"type":"array","uniqueItems":true}}}`)
	distinct := bigArray(20000, func(i int) string { return fmt.Sprintf(`{"a":%d,"b":"s%d"}`, i, i) })
	if _, errs := v.Normalize(distinct); len(errs) > 0 {
		t.Fatalf("distinct items refused: %v", errs)
	}
	for _, c := range []struct{ name, a, b string }{
		{"number", `1`, `1.0`},
		{"negative zero", `0`, `-0`},
		{"member order", `{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1}`},
		{"escape", `"aé"`, `"a\u00e9"`},
	} {
		doc := bigArray(20000, func(i int) string {
			switch i {
			case 7000:
				return c.a
			case 19000:
				return c.b
			}
			return fmt.Sprintf(`[%d]`, i)
		})
		_, errs := v.Normalize(doc)
		if len(errs) != 1 || !strings.Contains(errs[0].Message, "items 7000 and 19000 are equal") {
			t.Errorf("%s: errors %v, want items 7000 and 19000 equal", c.name, errs)
		}
	}
}

// A check whose deadline has passed, or whose Done is closed, stops with
// ErrDeadline instead of finishing; a short one never looks.
func TestNormalizeWithinLimits(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"xs":{"type":"array","uniqueItems":true}}}`)
	doc := bigArray(20000, func(i int) string { return fmt.Sprintf(`"s%d"`, i) })
	_, errs := v.NormalizeWithin(doc, Limits{Deadline: time.Now().Add(-time.Second)})
	if len(errs) != 1 || errs[0].Message != ErrDeadline {
		t.Errorf("past deadline: %v, want %q", errs, ErrDeadline)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, errs := v.NormalizeContext(ctx, doc); len(errs) != 1 || errs[0].Message != ErrDeadline {
		t.Errorf("canceled: %v, want %q", errs, ErrDeadline)
	}
	if _, errs := v.NormalizeContext(ctx, []byte(`{"xs":[1,2]}`)); len(errs) != 0 {
		t.Errorf("a short check under a canceled context: %v, want it to finish", errs)
	}
	if _, errs := v.NormalizeWithin(doc, Limits{Done: ctx.Done()}); len(errs) != 1 || errs[0].Message != ErrDeadline {
		t.Errorf("Done closed: %v, want %q", errs, ErrDeadline)
	}
	out, errs := v.NormalizeWithin(doc, Limits{Deadline: time.Now().Add(time.Hour)})
	if len(errs) != 0 || len(out) == 0 {
		t.Errorf("far deadline: %v", errs)
	}
	// Limits.Context's Done is asked for only by a check long enough to
	// look at its limits.
	lctx, lcancel := context.WithCancel(context.Background())
	defer lcancel()
	live := &doneCounter{Context: lctx}
	if _, errs := v.NormalizeWithin([]byte(`{"xs":[1,2]}`), Limits{Context: live}); len(errs) != 0 || live.n != 0 {
		t.Errorf("a short check: %v, Done asked %d times, want it finished without asking", errs, live.n)
	}
	if _, errs := v.NormalizeWithin(doc, Limits{Context: live}); len(errs) != 0 || live.n != 1 {
		t.Errorf("a long check under a live context: %v, Done asked %d times, want it finished, asking once", errs, live.n)
	}
}

// doneCounter counts the calls of its Done.
type doneCounter struct {
	context.Context
	n int
}

func (c *doneCounter) Done() <-chan struct{} {
	c.n++
	return c.Context.Done()
}

// One wrong value against an enum of a million values (issue 19: a 35 MB
// message) gets a message of at most MaxMessage bytes naming the first
// values and how many there are.
func TestEnumMessageCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"enum":[`)
	for i := range 1000000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"value-%d"`, i)
	}
	b.WriteString(`]}}}`)
	v := mustCompile(t, b.String())
	_, errs := v.Normalize([]byte(`{"x":"nope"}`))
	if len(errs) != 1 {
		t.Fatalf("errors %v, want one", errs)
	}
	m := errs[0].Message
	if len(m) > MaxMessage || !strings.Contains(m, `"value-0", "value-1"`) || !strings.Contains(m, "(1000000 values in all)") || !strings.Contains(m, `got string "nope"`) {
		t.Errorf("message of %d bytes: %.300s", len(m), m)
	}
	long := mustCompile(t, `{"type":"object","properties":{"x":{"const":"`+strings.Repeat("c", 100000)+`"}}}`)
	if _, errs := long.Normalize([]byte(`{"x":"nope"}`)); len(errs) != 1 || len(errs[0].Message) > MaxMessage {
		t.Errorf("const of 100,000 characters: message of %d bytes", len(errs[0].Message))
	}
}
