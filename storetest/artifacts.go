package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func testArtifacts(t *testing.T, e *env) {
	ctx := t.Context()
	a := &wield.Artifact{Owner: "key:a", Title: "Plan", Type: "markdown", Content: "# Plan\n\n1. one\n", ConversationID: "conv-1"}
	before := time.Now()
	if err := e.s.CreateArtifact(ctx, a); err != nil {
		t.Fatalf("CreateArtifact: %v", err)
	}
	if a.ID == "" || a.Version != 1 || a.CreatedAt.Before(before.Add(-time.Microsecond)) {
		t.Fatalf("CreateArtifact set ID %q, version %d, created %v; want an ID, 1 and the present", a.ID, a.Version, a.CreatedAt)
	}
	v1 := *a
	for _, version := range []int{0, 1} {
		got, err := e.s.Artifact(ctx, "key:a", a.ID, version)
		if err != nil {
			t.Fatalf("Artifact(%d): %v", version, err)
		}
		if diff := cmp.Diff(&v1, got, cmpOpts); diff != "" {
			t.Errorf("Artifact(%d) after CreateArtifact (-want +got)\n%s", version, diff)
		}
	}

	v2, err := e.s.PutArtifactVersion(ctx, "key:a", a.ID, 1, "# Plan\n\n1. one\n2. two\n")
	if err != nil {
		t.Fatalf("PutArtifactVersion on the latest: %v", err)
	}
	want2 := v1
	want2.Version, want2.Content, want2.CreatedAt = 2, "# Plan\n\n1. one\n2. two\n", v2.CreatedAt
	if diff := cmp.Diff(&want2, v2, cmpOpts); diff != "" {
		t.Errorf("PutArtifactVersion (-want +got)\n%s", diff)
	}
	if v2.CreatedAt.Before(v1.CreatedAt.Add(-time.Microsecond)) {
		t.Errorf("version 2 created %v, before version 1 (%v)", v2.CreatedAt, v1.CreatedAt)
	}
	for version, want := range map[int]*wield.Artifact{0: &want2, 1: &v1, 2: &want2} {
		got, err := e.s.Artifact(ctx, "key:a", a.ID, version)
		if err != nil {
			t.Fatalf("Artifact(%d): %v", version, err)
		}
		if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
			t.Errorf("Artifact(%d) (-want +got)\n%s", version, diff)
		}
	}

	_, err = e.s.PutArtifactVersion(ctx, "key:a", a.ID, 1, "based on an old version")
	mustErr(t, "PutArtifactVersion on an older version", err, wield.ErrConflict)
	_, err = e.s.PutArtifactVersion(ctx, "key:a", a.ID, 7, "based on a version to come")
	mustErr(t, "PutArtifactVersion on a version that does not exist", err, wield.ErrConflict)
	_, err = e.s.PutArtifactVersion(ctx, "key:a", "nope", 1, "x")
	mustErr(t, "PutArtifactVersion of an unknown artifact", err, wield.ErrNotFound)
	_, err = e.s.Artifact(ctx, "key:a", "nope", 0)
	mustErr(t, "Artifact of an unknown id", err, wield.ErrNotFound)
	_, err = e.s.Artifact(ctx, "key:a", a.ID, 3)
	mustErr(t, "Artifact of an unknown version", err, wield.ErrNotFound)
	err = e.s.CreateArtifact(ctx, &wield.Artifact{Owner: "key:a", ID: a.ID, Content: "again"})
	mustErr(t, "CreateArtifact with a taken id", err, wield.ErrConflict)
	if got, err := e.s.Artifact(ctx, "key:a", a.ID, 0); err != nil || got.Version != 2 {
		t.Errorf("after the refused changes: %+v, %v; want version 2", got, err)
	}

	named := &wield.Artifact{ID: "given-id", Content: ""}
	if err := e.s.CreateArtifact(ctx, named); err != nil {
		t.Fatal(err)
	}
	if got, err := e.s.Artifact(ctx, "", "given-id", 1); err != nil || got.Content != "" || got.Version != 1 {
		t.Errorf("an empty artifact with a given id: %+v, %v", got, err)
	}
}

// testArtifactOneWinner has 8 writers change one version at once.
func testArtifactOneWinner(t *testing.T, e *env) {
	ctx := t.Context()
	a := &wield.Artifact{ID: "doc", Content: "v1"}
	if err := e.s.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PutArtifactVersion(ctx, "", "doc", 1, "v2"); err != nil {
		t.Fatal(err)
	}
	errs := race(8, func(i int) error {
		_, err := e.s.PutArtifactVersion(context.Background(), "", "doc", 2, fmt.Sprintf("writer %d", i))
		return err
	})
	winner := oneWinner(t, errs, wield.ErrConflict, "writer")
	got, err := e.s.Artifact(ctx, "", "doc", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 || got.Content != fmt.Sprintf("writer %d", winner) {
		t.Errorf("latest: version %d %q, want 3 %q", got.Version, got.Content, fmt.Sprintf("writer %d", winner))
	}
}

// testArtifactOwners has two owners use one ID: each reaches only its own
// artifact, and the other's is not found rather than forbidden, for reads
// and writes alike.
func testArtifactOwners(t *testing.T, e *env) {
	ctx := t.Context()
	mine := &wield.Artifact{Owner: "key:a", ID: "plan", Content: "a's plan"}
	if err := e.s.CreateArtifact(ctx, mine); err != nil {
		t.Fatalf("CreateArtifact for key:a: %v", err)
	}
	theirs := &wield.Artifact{Owner: "key:b", ID: "plan", Content: "b's plan"}
	if err := e.s.CreateArtifact(ctx, theirs); err != nil {
		t.Fatalf("CreateArtifact of the same ID for key:b: %v (an ID is taken within its owner only)", err)
	}
	for owner, want := range map[string]string{"key:a": "a's plan", "key:b": "b's plan"} {
		got, err := e.s.Artifact(ctx, owner, "plan", 0)
		if err != nil || got.Content != want || got.Owner != owner {
			t.Errorf("Artifact(%s, plan): %+v, %v; want %q of %s", owner, got, err, want, owner)
		}
	}
	for _, owner := range []string{"", "key:c", "key:A"} {
		_, err := e.s.Artifact(ctx, owner, "plan", 0)
		mustErr(t, "Artifact of another owner's ID ("+owner+")", err, wield.ErrNotFound)
		_, err = e.s.Artifact(ctx, owner, "plan", 1)
		mustErr(t, "Artifact version 1 of another owner's ID ("+owner+")", err, wield.ErrNotFound)
		_, err = e.s.PutArtifactVersion(ctx, owner, "plan", 1, "overwritten")
		mustErr(t, "PutArtifactVersion on another owner's ID ("+owner+")", err, wield.ErrNotFound)
	}
	v2, err := e.s.PutArtifactVersion(ctx, "key:b", "plan", 1, "b's plan, v2")
	if err != nil || v2.Owner != "key:b" || v2.Version != 2 {
		t.Fatalf("PutArtifactVersion by the owner: %+v, %v", v2, err)
	}
	if got, err := e.s.Artifact(ctx, "key:a", "plan", 0); err != nil || got.Version != 1 || got.Content != "a's plan" {
		t.Errorf("key:a's artifact after key:b wrote its own: %+v, %v; want version 1 unchanged", got, err)
	}
}
