package artifact_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/artifact"
	"github.com/wieldhq/wield/memstore"
)

const doc = `# Report

The quick brown fox jumps over the lazy dog.
Revenue grew by 12 percent in the third quarter, driven by exports.
Costs stayed flat.

## Outlook

We expect growth to continue next year.
`

func setup(t *testing.T) (*artifact.Manager, string) {
	t.Helper()
	m := artifact.New(memstore.NewArtifacts())
	a, err := m.Create(context.Background(), wield.Artifact{Title: "Report", Type: "markdown", Content: doc})
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != 1 || !strings.HasPrefix(a.ID, "art_") {
		t.Fatalf("created %+v", a)
	}
	return m, a.ID
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           string // a line the new version must contain
		err            error
	}{
		{"exact", "Costs stayed flat.", "Costs fell 3 percent.", "Costs fell 3 percent.", nil},
		{"lost spaces", "Revenue grew by 12percent in the third quarter,  driven by exports.", "Revenue grew by 15 percent.", "Revenue grew by 15 percent.", nil},
		{"misremembered word", "We expect growth to continue next year", "We expect a slowdown next year", "We expect a slowdown next year.", nil},
		{"wrong case and punctuation", "the quick brown fox jumps over the lazy dog", "A fox.", "A fox.", nil},
		{"too different", "Profits tripled in every region", "x", "", artifact.ErrNoMatch},
		{"ambiguous exact", "the", "THE", "", artifact.ErrAmbiguous},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, id := setup(t)
			a, err := m.Update(context.Background(), artifact.Scope{}, id, tt.old, tt.new)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Version != 2 || !strings.Contains(a.Content, tt.want) {
				t.Fatalf("version %d:\n%s", a.Version, a.Content)
			}
			if strings.Count(a.Content, "\n") != strings.Count(doc, "\n") {
				t.Errorf("the update touched other lines:\n%s", a.Content)
			}
			old, err := m.Read(context.Background(), artifact.Scope{}, id, 1)
			if err != nil || old.Content != doc {
				t.Errorf("version 1 changed: %v", err)
			}
		})
	}
}

func TestAmbiguousFuzzy(t *testing.T) {
	m := artifact.New(memstore.NewArtifacts())
	text := "alpha: set the timeout to 30 seconds\nbeta: set the timeout to 30 seconds\n"
	a, _ := m.Create(context.Background(), wield.Artifact{Content: text})
	_, err := m.Update(context.Background(), artifact.Scope{}, a.ID, "set the timeout to 31 seconds", "x")
	if !errors.Is(err, artifact.ErrAmbiguous) {
		t.Errorf("err = %v, want ambiguous", err)
	}
}

func TestRewriteAndVersions(t *testing.T) {
	m, id := setup(t)
	ctx := context.Background()
	if _, err := m.Rewrite(ctx, artifact.Scope{}, id, "v2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Rewrite(ctx, artifact.Scope{}, id, "v3"); err != nil {
		t.Fatal(err)
	}
	for v, want := range map[int]string{0: "v3", 1: doc, 2: "v2", 3: "v3"} {
		a, err := m.Read(ctx, artifact.Scope{}, id, v)
		if err != nil || a.Content != want {
			t.Errorf("version %d: %v %q", v, err, a.Content)
		}
	}
	if _, err := m.Read(ctx, artifact.Scope{}, id, 9); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("version 9: %v", err)
	}
	if _, err := m.Update(ctx, artifact.Scope{}, "nope", "a", "b"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := m.Update(ctx, artifact.Scope{}, id, "", "b"); err == nil {
		t.Error("an empty fragment was accepted")
	}
}

// TestConcurrentUpdates: concurrent changes all land, each as a version.
func TestConcurrentUpdates(t *testing.T) {
	m := artifact.New(memstore.NewArtifacts())
	ctx := context.Background()
	a, _ := m.Create(ctx, wield.Artifact{Content: "a b c d"})
	done := make(chan error, 4)
	for _, w := range []string{"a", "b", "c", "d"} {
		go func() {
			_, err := m.Update(ctx, artifact.Scope{}, a.ID, w, strings.ToUpper(w))
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	got, _ := m.Read(ctx, artifact.Scope{}, a.ID, 0)
	if got.Content != "A B C D" || got.Version != 5 {
		t.Errorf("got %q version %d", got.Content, got.Version)
	}
}

// FuzzUpdate: whatever the text and fragment, Update does not panic, and a
// success keeps the text outside the replaced passage.
func FuzzUpdate(f *testing.F) {
	f.Add(doc, "Revenue grew by 12percent", "X")
	f.Add("héllo wörld ünïcode", "wörld ünicode", "Y")
	f.Add("aaaa", "aa", "b")
	f.Fuzz(func(t *testing.T, text, old, new string) {
		m := artifact.New(memstore.NewArtifacts())
		ctx := context.Background()
		a, err := m.Create(ctx, wield.Artifact{Content: text})
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Update(ctx, artifact.Scope{}, a.ID, old, new)
		if err != nil {
			return
		}
		if !strings.Contains(got.Content, new) || got.Version != 2 {
			t.Fatalf("update of %q in %q with %q gave %q", old, text, new, got.Content)
		}
	})
}
