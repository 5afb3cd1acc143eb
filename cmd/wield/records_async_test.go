package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
)

// TestServeRecordsAsyncPostgres: `wield serve --records async` on a
// PostgreSQL store writes its records in batches (postgres.Options.Async),
// as it does on SQLite; it was refused ("needs a SQLite store"). A call's
// record is in the store once the server has stopped.
func TestServeRecordsAsyncPostgres(t *testing.T) {
	dsn := os.Getenv("WIELD_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/wield_test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL: %v", err)
		}
		t.Skipf("PostgreSQL not reachable: %v", err)
	}
	conn.Close(ctx)
	schema := "records_async_" + strings.ToLower(wield.NewID())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db := dsn + sep + "wield_schema=" + schema
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "t.yaml"), []byte(serveTools), 0o644); err != nil {
		t.Fatal(err)
	}
	s := launchServe(t, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--tools", tools,
		"--keys", filepath.Join(dir, "keys.json"), "--records", "async"})
	res, err := httpapi.NewClient(s.url, "").Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"kept"}`),
		Caller: wield.Caller{ConversationID: "async-pg"}})
	if err != nil || !res.OK {
		t.Fatalf("the call: %+v %v", res, err)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d:\n%s", code, s.stderr.String())
	}
	code, out, errs := run(t, "calls", "--db", db, "--conversation", "async-pg", "--json")
	if code != 0 || !strings.Contains(out, res.CallID) {
		t.Errorf("the record of the call is not in the store: exit %d\n%s%s", code, out, errs)
	}
}
