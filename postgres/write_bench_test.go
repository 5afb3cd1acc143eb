package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// BenchmarkWrite compares ways of writing one batch of records, which is
// what the committer's writer does once per commit: COPY (what write uses),
// one multi-row INSERT ... VALUES, and one INSERT ... SELECT FROM unnest of
// one array per column.
func BenchmarkWrite(b *testing.B) {
	NeedServer(b)
	s := OpenTest(b, nil)
	ctx := context.Background()
	strategies := []struct {
		name  string
		write func(ctx context.Context, rows []*row) error
	}{
		{"copy", s.write},
		{"values", s.writeValues},
		{"unnest", s.writeUnnest},
	}
	for _, st := range strategies {
		for _, n := range []int{1, 16, 64, 512} {
			b.Run(fmt.Sprintf("%s/batch=%d", st.name, n), func(b *testing.B) {
				b.ReportAllocs()
				rows := make([]*row, n)
				at := time.Now()
				for b.Loop() {
					for i := range rows {
						rows[i] = benchRow(b, at)
					}
					if err := st.write(ctx, rows); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

func benchRow(b *testing.B, at time.Time) *row {
	id := wield.NewID()
	r := &wield.Record{
		Call: &wield.Call{ID: id, Tool: "echo", Arguments: json.RawMessage(`{"message":"hello, world"}`),
			Caller: wield.ForConversation("agent", "conv-"+id[20:])},
		Arguments: json.RawMessage(`{"message":"hello, world"}`),
		Category:  wield.CategoryCustom, ToolVersion: "1.0.0",
		Result: &wield.Result{CallID: id, Tool: "echo", OK: true, Output: json.RawMessage(`{"message":"hello, world"}`),
			Attempts: 1, StartedAt: at, FinishedAt: at.Add(time.Microsecond), Duration: 20 * time.Microsecond},
		QueuedAt: at,
	}
	w, err := newRow(r, false)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func (s *Store) writeValues(ctx context.Context, rows []*row) error {
	var sb strings.Builder
	sb.WriteString(s.sql("INSERT INTO @calls") + " (" + strings.Join(callColumns, ", ") + ") VALUES ")
	args := make([]any, 0, len(rows)*len(callColumns))
	for i, w := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for j := range callColumns {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("$" + strconv.Itoa(i*len(callColumns)+j+1))
		}
		sb.WriteByte(')')
		args = append(args, w.vals[:]...)
	}
	_, err := s.pool.Exec(ctx, sb.String(), args...)
	return err
}

var unnestTypes = []string{
	"text", "text", "text", "text", "text", "text", "text", "text", "text", "text", "text",
	"bool", "text", "text", "int4", "int8", "int8", "int8", "int8", "int8",
	"bytea", "bytea", "bytea", "bytea", "bytea",
}

func (s *Store) writeUnnest(ctx context.Context, rows []*row) error {
	ps := make([]string, len(callColumns))
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d::%s[]", i+1, unnestTypes[i])
	}
	cols := make([]any, len(callColumns))
	for j := range callColumns {
		switch unnestTypes[j] {
		case "text":
			a := make([]string, len(rows))
			for i, w := range rows {
				a[i] = w.vals[j].(string)
			}
			cols[j] = a
		case "bool":
			a := make([]bool, len(rows))
			for i, w := range rows {
				a[i] = w.vals[j].(bool)
			}
			cols[j] = a
		case "int4":
			a := make([]int32, len(rows))
			for i, w := range rows {
				a[i] = w.vals[j].(int32)
			}
			cols[j] = a
		case "int8":
			a := make([]*int64, len(rows))
			for i, w := range rows {
				if v, ok := w.vals[j].(int64); ok {
					a[i] = &v
				}
			}
			cols[j] = a
		case "bytea":
			a := make([][]byte, len(rows))
			for i, w := range rows {
				a[i], _ = w.vals[j].([]byte)
			}
			cols[j] = a
		}
	}
	_, err := s.pool.Exec(ctx, s.sql("INSERT INTO @calls")+" ("+strings.Join(callColumns, ", ")+") SELECT * FROM unnest("+strings.Join(ps, ", ")+")", cols...)
	return err
}
