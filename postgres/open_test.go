package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wieldhq/wield"
)

// TestOpenServerDown opens a store on a loopback port where nothing
// listens: the error comes at once and names the address, not the password.
func TestOpenServerDown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	s, err := Open(ctx, "postgres://wield:s3cret-pw@127.0.0.1:1/wield?sslmode=disable", nil)
	if err == nil {
		s.Close(ctx)
		t.Fatal("Open succeeded with no server")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open took %v to fail", took)
	}
	msg := err.Error()
	if !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "connection refused") || strings.Contains(msg, "s3cret") {
		t.Errorf("error %q: want the address and the reason, without the password", msg)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v does not wrap ECONNREFUSED", err)
	}
}

func TestOpenBadDSN(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://wield:s3cret-pw@db:notaport/wield",
		"postgres://wield:s3cret-pw@db/wield?sslmode=sometimes",
		"host=db password=s3cret-pw port=x",
	} {
		_, err := Open(context.Background(), dsn, nil)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "invalid DSN") {
			t.Errorf("Open(%q) = %v; want an invalid DSN error without the password", dsn, err)
		}
	}
}

// TestOpenRefused reaches the server and asks for a database it lacks.
func TestOpenRefused(t *testing.T) {
	t.Parallel()
	NeedServer(t)
	cfg, err := pgx.ParseConfig(ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	dsn := strings.Replace(ServerDSN(), "/"+cfg.Database, "/wield_no_such_db", 1)
	_, err = Open(context.Background(), dsn, nil)
	if err == nil || !strings.Contains(err.Error(), "wield_no_such_db") || !strings.Contains(err.Error(), "3D000") ||
		!strings.Contains(err.Error(), cfg.Host) {
		t.Errorf("Open of a missing database = %v", err)
	}
}

// versions returns the versions recorded in a schema.
func versions(t *testing.T, s *Store, schema string) []int {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), "SELECT version FROM "+pgx.Identifier{schema, "schema_version"}.Sanitize()+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func withConn(t *testing.T, s *Store, f func(c *pgx.Conn) error) error {
	t.Helper()
	c, err := s.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	return f(c.Conn())
}

// TestMigrations takes a schema at version 1, with a record, through a
// failing migration (nothing changes), a good one (the record stays), and
// then opens it with this build, which knows only the versions before: refused.
func TestMigrations(t *testing.T) {
	t.Parallel()
	schema := FreshSchema(t)
	ctx := context.Background()
	s := OpenSchema(t, &Options{Schema: schema})
	if err := s.Save(ctx, &wield.Record{Call: &wield.Call{ID: "r1", Tool: "a"}, Result: &wield.Result{CallID: "r1", Tool: "a", OK: true}}); err != nil {
		t.Fatal(err)
	}
	v1 := migrations[len(migrations)-1].version

	broken := append(migrations[:len(migrations):len(migrations)],
		migration{version: v1 + 1, name: "broken", sql: "ALTER TABLE calls ADD COLUMN note text; SELECT no_such_column FROM calls"})
	err := withConn(t, s, func(c *pgx.Conn) error { return migrate(ctx, c, schema, broken) })
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%04d_broken.sql", v1+1)) {
		t.Errorf("broken migration: %v; want an error naming the file", err)
	}
	if got := versions(t, s, schema); len(got) != v1 {
		t.Errorf("after a failed migration the versions are %v", got)
	}
	if err := s.Exec(ctx, "SELECT note FROM calls"); err == nil {
		t.Error("a failed migration left its first statement's change")
	}

	next := append(migrations[:len(migrations):len(migrations)],
		migration{version: v1 + 1, name: "note", sql: "ALTER TABLE calls ADD COLUMN note text NOT NULL DEFAULT 'migrated'"})
	if err := withConn(t, s, func(c *pgx.Conn) error { return migrate(ctx, c, schema, next) }); err != nil {
		t.Fatal(err)
	}
	if n, err := s.QueryInt(ctx, "SELECT count(*) FROM calls WHERE note = 'migrated'"); err != nil || n != 1 {
		t.Errorf("after migrating: %d records with the new column (%v), want 1", n, err)
	}
	if got := versions(t, s, schema); len(got) != v1+1 {
		t.Errorf("versions %v after migrating to %d", got, v1+1)
	}

	_, err = Open(ctx, ServerDSN(), &Options{Schema: schema})
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", v1+1)) || !strings.Contains(err.Error(), fmt.Sprintf("up to %d", v1)) {
		t.Errorf("Open of a newer schema = %v; want ErrSchemaTooNew naming both versions", err)
	}
}

// TestOpenExistingEmptySchema opens a schema an administrator created,
// empty: the tables are created in it.
func TestOpenExistingEmptySchema(t *testing.T) {
	t.Parallel()
	schema := FreshSchema(t)
	admin := OpenTest(t, nil)
	if err := admin.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	s := OpenSchema(t, &Options{Schema: schema})
	if got := versions(t, s, schema); len(got) != len(migrations) {
		t.Errorf("versions %v", got)
	}
}

// TestConcurrentOpen opens one new schema from many goroutines at once, as
// servers starting together do: all succeed, and each migration is applied
// once.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	schema := FreshSchema(t)
	var wg sync.WaitGroup
	stores := make([]*Store, 6)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = Open(context.Background(), ServerDSN(), &Options{Schema: schema, MaxConns: 2})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		defer stores[i].Close(context.Background())
	}
	if got := versions(t, stores[0], schema); len(got) != len(migrations) {
		t.Errorf("versions %v", got)
	}
}

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string // "" for no error
	}{
		{"ok", fstest.MapFS{"m/0002_b.sql": file("B"), "m/0001_a.sql": file("A")}, ""},
		{"gap", fstest.MapFS{"m/0001_a.sql": file("A"), "m/0003_c.sql": file("C")}, "expected version 2"},
		{"repeat", fstest.MapFS{"m/0001_a.sql": file("A"), "m/0001_b.sql": file("B")}, "expected version 2"},
		{"name", fstest.MapFS{"m/1_a.sql": file("A")}, "NNNN_name.sql"},
		{"empty", fstest.MapFS{"m/.keep": nil}, "NNNN_name.sql"},
	}
	for _, tt := range tests {
		got, err := loadMigrations(tt.files, "m")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want == "" && (len(got) != 2 || got[0].sql != "A" || got[1].name != "b"):
			t.Errorf("%s: %+v", tt.name, got)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

// TestOddSchemaName uses a schema whose name needs quoting everywhere.
func TestOddSchemaName(t *testing.T) {
	t.Parallel()
	NeedServer(t)
	schema := "Odd \"name\"-" + NewSchemaName()
	t.Cleanup(func() { DropSchema(t, schema) })
	s := OpenSchema(t, &Options{Schema: schema})
	ctx := context.Background()
	id := wield.NewID()
	if err := s.Save(ctx, &wield.Record{Call: &wield.Call{ID: id, Tool: "a", IdempotencyKey: "k", Caller: wield.ForConversation("x", "c")},
		Result: &wield.Result{CallID: id, Tool: "a", OK: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(ctx, id); err != nil {
		t.Error(err)
	}
	if p, err := s.Calls(ctx, wield.CallQuery{ConversationID: "c"}); err != nil || len(p.Records) != 1 {
		t.Errorf("Calls: %d records, %v", len(p.Records), err)
	}
	if r, err := s.Replay(ctx, "a", "k"); err != nil || r == nil {
		t.Errorf("Replay: %v, %v", r, err)
	}
	if st, err := s.Statistics(ctx, wield.StatsQuery{}); err != nil || st.Overall.Count != 1 {
		t.Errorf("Statistics: %+v, %v", st, err)
	}
	if err := s.CreateApproval(ctx, &wield.ApprovalRequest{ID: "p", Tool: "a"}); err != nil {
		t.Error(err)
	}
	if _, err := s.DecideApproval(ctx, "p", "", wield.Decision{Approved: true}); err != nil {
		t.Error(err)
	}
	a := &wield.Artifact{Content: "x"}
	if err := s.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutArtifactVersion(ctx, "", a.ID, 1, "y"); err != nil {
		t.Error(err)
	}
	if got := versions(t, s, schema); len(got) != len(migrations) {
		t.Errorf("versions %v", got)
	}
}
