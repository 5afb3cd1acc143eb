package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
)

// crashSchema names the schema TestCrashChild writes to; it is set only in
// the child process TestCrash starts.
const crashSchema = "WIELD_POSTGRES_CRASH_SCHEMA"

// TestCrash runs calls in a child process in sync mode, kills it with
// SIGKILL mid-load, and checks that every call whose result the child saw
// returned is in the store: a result is handed back only after its record
// is committed.
func TestCrash(t *testing.T) {
	t.Parallel()
	NeedServer(t)
	schema := FreshSchema(t)
	s := OpenSchema(t, &Options{Schema: schema}) // migrated before the child starts

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashSchema+"="+schema, "WIELD_TEST_POSTGRES="+ServerDSN())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const enough = 2000
	var ids []string
	killed := false
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		id, ok := strings.CutPrefix(lines.Text(), "id ")
		if !ok {
			continue
		}
		ids = append(ids, id)
		if len(ids) == enough && !killed {
			killed = true
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
		}
	}
	// Lines still in the pipe after the kill were written, so their calls
	// had returned: they count too.
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child printed %d call IDs, want %d, and ended: %v\n%s", len(ids), enough, err, stderr.String())
	}

	var found int64
	found, err = s.QueryInt(context.Background(), "SELECT count(*) FROM calls WHERE id = ANY($1)", ids)
	if err != nil {
		t.Fatal(err)
	}
	total, err := s.QueryInt(context.Background(), "SELECT count(*) FROM calls")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the child returned %d calls before SIGKILL; %d are recorded, %d records in all", len(ids), found, total)
	if found != int64(len(ids)) {
		t.Errorf("%d calls returned before the kill are not in the store", int64(len(ids))-found)
		shown := 0
		for _, id := range ids {
			if _, err := s.Call(context.Background(), id); err != nil && shown < 5 {
				t.Errorf("for example %s: %v", id, err)
				shown++
			}
		}
	}
}

// TestCrashChild is TestCrash's child: 8 goroutines run echo calls through
// an engine that records them in sync mode, printing each returned call's
// ID, until the parent kills the process.
func TestCrashChild(t *testing.T) {
	schema := os.Getenv(crashSchema)
	if schema == "" {
		t.Skip("run by TestCrash in a child process")
	}
	ctx := context.Background()
	s, err := Open(ctx, ServerDSN(), &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Echo())
	e := engine.New(reg, &engine.Options{Store: s})
	args := json.RawMessage(`{"message":"still here"}`)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			caller := wield.ForConversation("crash", fmt.Sprint("c", g))
			for {
				res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: args, Caller: caller})
				if err != nil || !res.OK {
					fmt.Fprintln(os.Stderr, "call failed:", err, res)
					os.Exit(3)
				}
				// One write per line, so lines of goroutines never mix.
				os.Stdout.WriteString("id " + res.CallID + "\n")
			}
		})
	}
	// The parent kills the process; if it never does, stop on our own.
	time.Sleep(90 * time.Second)
	fmt.Fprintln(os.Stderr, "the parent never killed the child")
	os.Exit(4)
}
