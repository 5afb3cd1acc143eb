package toolsearch

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

type noInput struct{}

// tool makes a small typed tool for tests.
func tool(name, desc string, tags ...string) *wield.Tool {
	t := wield.Func(name, desc, func(context.Context, noInput) (string, error) { return name, nil })
	t.Tags = tags
	return t
}

type fileInput struct {
	Path     string `json:"path" description:"Where the spreadsheet lives"`
	Encoding string `json:"encoding,omitempty" enum:"utf8,latin1"`
}

func names(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Tool.Name)
	}
	return out
}

func TestSearch(t *testing.T) {
	withParams := wield.Func("load_sheet", "Load a workbook.", func(context.Context, fileInput) (string, error) { return "", nil })
	disabled := tool("delete_everything", "Delete every file and remove all folders.")
	disabled.Status = wield.StatusDisabled
	tools := []*wield.Tool{
		tool("create_issue", "Open a new issue in the tracker.", "tickets"),
		tool("delete_issue", "Delete an issue from the tracker.", "tickets"),
		tool("list_issues", "List the issues of the tracker.", "tickets"),
		tool("send_email", "Send an email message to people."),
		tool("read_file", "Read a text file from disk."),
		tool("b_twin", "Frobnicate widgets."),
		tool("a_twin", "Frobnicate widgets."),
		withParams,
		disabled,
		nil,
		tool("send_email", "A second tool with a taken name is ignored, as the registry does."),
	}
	ix := New(tools)
	tests := []struct {
		name  string
		query string
		limit int
		want  []string
	}{
		{"name and description", "open a ticket for a crash", 2, []string{"create_issue", "delete_issue"}},
		{"synonym of the name", "remove the bug", 1, []string{"delete_issue"}},
		{"ties by name", "frobnicate widgets", 0, []string{"a_twin", "b_twin"}},
		{"limit", "frobnicate widgets", 1, []string{"a_twin"}},
		{"parameter description", "spreadsheet", 0, []string{"load_sheet"}},
		{"enum value", "latin1", 0, []string{"load_sheet"}},
		{"camel and plural", "SendEmails", 1, []string{"send_email"}},
		{"exact name first", "list_issues", 1, []string{"list_issues"}},
		{"exact name of a tool without matching words", "a_twin", 1, []string{"a_twin"}},
		{"disabled tools are left out", "delete every folder", 0, []string{"delete_issue"}},
		{"nothing matches", "kubernetes", 0, nil},
		{"only stop words", "the of and to", 5, nil},
		{"empty", "", 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, names(ix.Search(tt.query, tt.limit))); diff != "" {
				t.Errorf("Search(%q, %d) (-want +got):\n%s", tt.query, tt.limit, diff)
			}
		})
	}
	if got, want := ix.Len(), 8; got != want {
		t.Errorf("Len() = %d, want %d (nil, disabled and duplicate left out)", got, want)
	}
	if got := ix.Tools()[3].Description; got != "Send an email message to people." {
		t.Errorf("the first send_email should win, got %q", got)
	}
	if got, want := ix.Count("issues"), 3; got != want {
		t.Errorf("Count(issues) = %d, want %d", got, want)
	}
}

func TestSearchScores(t *testing.T) {
	ix := New(loadCatalog(t))
	hits := ix.Search("list kubernetes pods", 10)
	if len(hits) != 10 {
		t.Fatalf("got %d hits, want 10", len(hits))
	}
	if !slices.IsSortedFunc(hits, better) {
		t.Errorf("hits are not best first: %v", names(hits))
	}
	for _, h := range hits {
		if h.Score <= 0 {
			t.Errorf("%s has score %v, want > 0", h.Tool.Name, h.Score)
		}
	}
	// The same search gives the same answer, and Search(q, n) is a prefix
	// of Search(q, 0).
	all := ix.Search("list kubernetes pods", 0)
	if diff := cmp.Diff(names(hits), names(all[:10])); diff != "" {
		t.Errorf("limited search is not a prefix of the full one (-want +got):\n%s", diff)
	}
	if got, want := len(all), ix.Count("list kubernetes pods"); got != want {
		t.Errorf("Search(q, 0) has %d hits, Count says %d", got, want)
	}
	if len(New(nil).Search("anything", 5)) != 0 {
		t.Error("an empty index found something")
	}
}

func TestSearchConcurrent(t *testing.T) {
	ix := New(loadCatalog(t))
	want := names(ix.Search("deploy a container to cloud run", 5))
	errs := make(chan string, 8)
	for i := range 8 {
		go func() {
			got := names(ix.Search("deploy a container to cloud run", 5))
			if !slices.Equal(got, want) {
				errs <- fmt.Sprintf("goroutine %d: %v, want %v", i, got, want)
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func FuzzSearch(f *testing.F) {
	ix := New(loadCatalog(f))
	for _, s := range []string{"", "create issue", "k8s_get_pods", "ÄÖÜ ß", "HTTPServer%%", "+1 555 123 4567", "a@b.c", "\xff\xfe", "kick them out", "throw out out out", "dug wrote sent up down"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		limit = limit%50 + 1
		if limit < 1 {
			limit = -limit + 1
		}
		hits := ix.Search(q, limit)
		if len(hits) > limit {
			t.Fatalf("Search(%q, %d) returned %d hits", q, limit, len(hits))
		}
		if !slices.IsSortedFunc(hits, better) {
			t.Fatalf("Search(%q) not best first: %v", q, names(hits))
		}
		if again := ix.Search(q, limit); !slices.Equal(names(hits), names(again)) {
			t.Fatalf("Search(%q) is not deterministic", q)
		}
	})
}

// BenchmarkSearch searches 10,000 tools with a typical request.
func BenchmarkSearch(b *testing.B) {
	ix := New(scaledCatalog(b, 10_000))
	queries := []string{
		"open a bug in jira about the login page crashing",
		"restart the checkout deployment in kubernetes",
		"send an email to the team",
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if len(ix.Search(queries[i%len(queries)], 5)) == 0 {
			b.Fatal("no hits")
		}
	}
}

// BenchmarkBuild indexes 10,000 tools.
func BenchmarkBuild(b *testing.B) {
	tools := scaledCatalog(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if New(tools).Len() != 10_000 {
			b.Fatal("wrong size")
		}
	}
}
