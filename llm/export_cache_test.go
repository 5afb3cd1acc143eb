package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// countingDialect counts the conversions of its dialect.
type countingDialect struct {
	llm.Dialect
	n atomic.Int64
}

func (d *countingDialect) ExportTool(t *wield.Tool) (any, []llm.Problem) {
	d.n.Add(1)
	return d.Dialect.ExportTool(t)
}

// TestToolCache: the cache gives what Export gives, as JSON, converting
// each tool once however many turns offer it; a refused tool fails the
// whole list with every problem, as Export words them.
func TestToolCache(t *testing.T) {
	tools := representativeTools(t)
	for _, tc := range dialects {
		t.Run(tc.d.Name(), func(t *testing.T) {
			vs, ps := llm.Export(tc.d, tools)
			accepted := make([]*wield.Tool, 0, len(tools))
			for _, tl := range tools {
				if _, p := tc.d.ExportTool(tl); len(p) == 0 {
					accepted = append(accepted, tl)
				}
			}
			d := &countingDialect{Dialect: tc.d}
			c := &llm.ToolCache{Dialect: d}
			for turn := range 3 {
				got, err := c.Tools(accepted)
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				var want []json.RawMessage
				for _, v := range vs {
					b, _ := llm.JSON(v, "")
					want = append(want, b)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("turn %d (-want +got):\n%s", turn, diff)
				}
			}
			if n := d.n.Load(); n != int64(len(accepted)) {
				t.Errorf("%d conversions for %d tools over 3 turns", n, len(accepted))
			}
			if len(ps) == 0 {
				return
			}
			_, err := c.Tools(tools)
			var te *llm.ToolsError
			if !errors.As(err, &te) {
				t.Fatalf("error %v, want a ToolsError", err)
			}
			if diff := cmp.Diff(ps, te.Problems); diff != "" {
				t.Errorf("problems differ from Export's (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolCacheList: the rules of a list hold on every call, cached or
// not: a nil tool, a tool without a schema and a second tool of a name.
func TestToolCacheList(t *testing.T) {
	tools := representativeTools(t)
	c := &llm.ToolCache{Dialect: llm.MCP}
	if _, err := c.Tools(tools[:1]); err != nil {
		t.Fatal(err)
	}
	noSchema := &wield.Tool{Name: "bare"}
	_, err := c.Tools([]*wield.Tool{tools[0], nil, noSchema, tools[0]})
	want := fmt.Sprintf(`3 tools cannot be offered: mcp: tool "": tool 1 of the list is nil; mcp: tool "bare": the tool has no input schema; mcp: tool %q: a tool of the same name comes earlier in the list; names must be unique`, tools[0].Name)
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// TestToolCacheBounded: a process that keeps offering new tools does not
// keep every tool it ever converted.
func TestToolCacheBounded(t *testing.T) {
	base := representativeTools(t)[0]
	d := &countingDialect{Dialect: llm.MCP}
	c := &llm.ToolCache{Dialect: d}
	first := base
	for i := range 10_000 {
		tl := *base
		tl.Name = fmt.Sprintf("t%d", i)
		if i == 0 {
			first = &tl
		}
		if _, err := c.Tools([]*wield.Tool{&tl}); err != nil {
			t.Fatal(err)
		}
	}
	before := d.n.Load()
	c.Tools([]*wield.Tool{first})
	if d.n.Load() != before+1 {
		t.Error("the first of 10,000 tools is still cached: the cache is not bounded")
	}
}

// BenchmarkOfferTools is what a client spends on the tools of one turn:
// 30 tools converted and written as JSON on every turn (export), against
// the cache that converts them once (cached).
func BenchmarkOfferTools(b *testing.B) {
	all := benchTools(b, 30)
	for _, tc := range dialects {
		var tools []*wield.Tool
		for _, tl := range all {
			if _, p := tc.d.ExportTool(tl); len(p) == 0 {
				tools = append(tools, tl)
			}
		}
		b.Run(tc.d.Name()+"/export", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				vs, _ := llm.Export(tc.d, tools)
				for _, v := range vs {
					if _, err := llm.JSON(v, ""); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(tc.d.Name()+"/cached", func(b *testing.B) {
			c := &llm.ToolCache{Dialect: tc.d}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Tools(tools); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestToolCacheConcurrent: clients are shared by agents running at once;
// the cache gives each the same tools (go test -race checks the rest).
func TestToolCacheConcurrent(t *testing.T) {
	tools := benchTools(t, 40)
	c := &llm.ToolCache{Dialect: llm.MCP}
	want, err := c.Tools(tools)
	if err != nil {
		t.Fatal(err)
	}
	c = &llm.ToolCache{Dialect: llm.MCP}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 20 {
				got, err := c.Tools(tools)
				if err == nil && !slices.EqualFunc(want, got, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
					err = errors.New("the tools differ")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
