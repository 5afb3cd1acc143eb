package main

import (
	"context"
	"encoding/json"
	"os"
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
	dsn, schema := postgresSchema(t, "records_async_")
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
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db := dsn + sep + "wield_schema=" + schema
	s := startServeOn(t, db, "", "--records", "async")
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
