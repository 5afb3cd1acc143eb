package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/storetest"
)

func open(t *testing.T, path string, opts *sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStoretest(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts sqlite.Options
	}{
		{"sync", sqlite.Options{}},
		// The duplicate-ID test makes an async store log an error.
		{"async", sqlite.Options{Async: true, FlushInterval: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			storetest.Run(t, storetest.Harness{
				Open: func(t *testing.T) wield.Storage {
					return open(t, filepath.Join(t.TempDir(), "wield.db"), &mode.opts)
				},
				Reopen: func(t *testing.T, s wield.Storage) wield.Storage {
					if err := s.Close(context.Background()); err != nil {
						t.Fatalf("Close: %v", err)
					}
					return open(t, s.(*sqlite.Store).Path(), &mode.opts)
				},
			})
		})
	}
}

// TestOpenCreates opens a store in a directory that does not exist yet:
// Open makes it, and the file is its owner's alone.
func TestOpenCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "wield.db")
	s := open(t, path, nil)
	defer s.Close(context.Background())
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode %v, want 0600", perm)
	}
	if got := sqlite.SchemaVersion(); got < 1 {
		t.Errorf("SchemaVersion() = %d", got)
	}
}

// TestOpenRefuses gives Open what it must refuse, with an error that names
// the file and says what is wrong.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is no database\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string
	}{
		{garbage, "not a SQLite database"},
		{filepath.Join(notDir, "wield.db"), "not a directory"},
		{"", "want the path of a file"},
		{":memory:", "want the path of a file"},
	}
	for _, tt := range tests {
		s, err := sqlite.Open(context.Background(), tt.path, nil)
		if err == nil {
			s.Close(context.Background())
			t.Errorf("Open(%q): no error", tt.path)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Open(%q): %v; want an error naming the file and saying %q", tt.path, err, tt.want)
		}
	}
	// The garbage is left as it was.
	if b, _ := os.ReadFile(garbage); !strings.HasPrefix(string(b), "this is no database") {
		t.Error("Open changed a file that is not a database")
	}
}

// TestOpenLocked opens a database that another connection holds an
// exclusive lock on: Open waits for the busy timeout, then says so.
func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wield.db")
	open(t, path, nil).Close(context.Background())

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := sqlite.Open(context.Background(), path, &sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	if err == nil {
		s.Close(context.Background())
		t.Fatal("Open of a locked database: no error")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "locked") {
		t.Errorf("Open of a locked database: %v; want the file named and the lock told", err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("Open gave up after %v, before the busy timeout", waited)
	}
	// Once the lock is gone, the store opens.
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	open(t, path, nil).Close(context.Background())
}

// TestNewerSchema refuses a database that a newer wield has migrated.
func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wield.db")
	open(t, path, nil).Close(context.Background())
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	next := sqlite.SchemaVersion() + 1
	if _, err := db.Exec(`INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'from_the_future', 0)`, next); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(context.Background(), path, nil)
	if err == nil {
		t.Fatal("Open of a newer schema: no error")
	}
	for _, want := range []string{path, "schema version " + strconv.Itoa(next), "version " + strconv.Itoa(sqlite.SchemaVersion()), "newer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open of a newer schema: %v; want it to say %q", err, want)
		}
	}
}

// TestSaveAfterClose: everything after Close fails with wield.ErrClosed;
// Close twice is fine.
func TestSaveAfterClose(t *testing.T) {
	for _, async := range []bool{false, true} {
		s := open(t, filepath.Join(t.TempDir(), "wield.db"), &sqlite.Options{Async: async})
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		ctx := context.Background()
		r := &wield.Record{Call: &wield.Call{ID: wield.NewID(), Tool: "echo"}, Result: &wield.Result{OK: true}}
		_, callErr := s.Call(ctx, "x")
		_, callsErr := s.Calls(ctx, wield.CallQuery{})
		_, sumErr := s.Summary(ctx, "c")
		_, decideErr := s.DecideApproval(ctx, "a", "", wield.Decision{})
		_, artErr := s.Artifact(ctx, "", "a", 0)
		for what, err := range map[string]error{
			"Save":           s.Save(ctx, r),
			"Call":           callErr,
			"Calls":          callsErr,
			"Summary":        sumErr,
			"CreateApproval": s.CreateApproval(ctx, &wield.ApprovalRequest{Tool: "rm"}),
			"DecideApproval": decideErr,
			"Artifact":       artErr,
		} {
			if !errors.Is(err, wield.ErrClosed) {
				t.Errorf("async %v: %s after Close: %v, want ErrClosed", async, what, err)
			}
		}
	}
}

// TestSaveRefusesIncompleteRecords: a record without a call, result or id
// is not kept, and Save says why.
func TestSaveRefusesIncompleteRecords(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "wield.db"), nil)
	defer s.Close(context.Background())
	for _, r := range []*wield.Record{
		nil,
		{Result: &wield.Result{}},
		{Call: &wield.Call{ID: "x", Tool: "echo"}},
		{Call: &wield.Call{Tool: "echo"}, Result: &wield.Result{}},
	} {
		if err := s.Save(context.Background(), r); err == nil {
			t.Errorf("Save(%+v): no error", r)
		}
	}
}
