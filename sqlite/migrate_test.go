package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestMigrateFromOlderSchema opens a database left at schema version 1,
// with a record in it: Open brings it to the latest version, and the record
// is still there.
func TestMigrateFromOlderSchema(t *testing.T) {
	if len(migrations) < 2 {
		t.Skip("only one migration")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wield.db")
	if err := create(path); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := migrateTo(ctx, &Store{w: db}, 1); err != nil {
		t.Fatal(err)
	}
	id := wield.NewID()
	if _, err := db.Exec(`INSERT INTO calls (id, tool, ok, queued_at, duration_ns, conversation_id, attempts,
		queue_wait_ns, timeout_ns, priority, output) VALUES (?, 'echo', 1, 1700000000000000, 5000, 'conv', 1, 0, 0, 0, ?)`,
		id, []byte(`"hi"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT 1 FROM approvals`); err == nil {
		t.Fatal("version 1 has approvals already: the test builds the wrong old schema")
	}
	db.Close()

	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	var versions []int
	rows, err := s.r.Query(`SELECT version FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	rows.Close()
	var want []int
	for _, m := range migrations {
		want = append(want, m.version)
	}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("schema versions (-want +got)\n%s", diff)
	}
	r, err := s.Call(ctx, id)
	if err != nil {
		t.Fatalf("the record of the old schema: %v", err)
	}
	if r.Call.Caller.ConversationID != "conv" || string(r.Result.Output) != `"hi"` || !r.Result.OK {
		t.Errorf("the record of the old schema reads %+v %+v", r.Call, r.Result)
	}
	if err := s.CreateApproval(ctx, &wield.ApprovalRequest{Tool: "rm", Digest: "d"}); err != nil {
		t.Errorf("the new tables: %v", err)
	}
}

// TestMigrationsAreNumbered: the embedded files run 1, 2, 3, ...
func TestMigrationsAreNumbered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.sql == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}
