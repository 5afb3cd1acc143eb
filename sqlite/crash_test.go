package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
	"github.com/wieldhq/wield/sqlite"
)

// crashEnv names the database the child process writes to; the child test
// runs only when it is set.
const crashEnv = "WIELD_SQLITE_CRASH_CHILD_DB"

type echoIn struct {
	Message string `json:"message"`
}

func echo(_ context.Context, in echoIn) (echoIn, error) { return in, nil }

// TestCrash runs calls through an engine in a child process, in sync mode,
// and kills it with SIGKILL mid-load: every call whose result the child saw
// returned is found in the store afterwards.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	const atLeast = 2000
	path := filepath.Join(t.TempDir(), "wield.db")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var returned []string
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() { // ends when the child is gone and the pipe is drained
		line := sc.Text()
		id, ok := strings.CutPrefix(line, "returned ")
		if !ok {
			t.Logf("child: %s", line)
			continue
		}
		returned = append(returned, id)
		if len(returned) >= atLeast && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the child did not return %d calls in time (it returned %d)", atLeast, len(returned))
	}
	var exit *exec.ExitError
	if !killed || !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended by itself (%v) after %d calls; want it killed after %d", err, len(returned), atLeast)
	}
	t.Logf("killed the child after %d returned calls", len(returned))

	s := open(t, path, nil)
	defer s.Close(context.Background())
	found := map[string]bool{}
	q := wield.CallQuery{Limit: 1000}
	for range 10_000 {
		page, err := s.Calls(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			found[r.Call.ID] = true
		}
		if q.Cursor = page.Next; q.Cursor == "" {
			break
		}
	}
	missing := 0
	for _, id := range returned {
		if !found[id] {
			missing++
			if missing <= 5 {
				t.Errorf("call %s returned before the kill, and is not in the store", id)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d returned calls are missing (%d records in the store)", missing, len(returned), len(found))
	}
	t.Logf("%d records in the store, %d returned before the kill", len(found), len(returned))
}

// TestCrashChild is TestCrash's child: 8 goroutines call an echo tool
// through an engine recording in sync mode, and print each call's ID as
// soon as Call returns, until they are killed (or 60 s pass).
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestCrash")
	}
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("echo", "Echo a message", echo))
	lim, err := limit.New(limit.Config{MaxConcurrent: 16})
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(reg, &engine.Options{Store: s, Limiter: lim})
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			args := json.RawMessage(fmt.Sprintf(`{"message":"from %d"}`, g))
			caller := wield.ForConversation("agent", fmt.Sprintf("conv-%d", g))
			for i := 0; i < 1_000_000 && time.Now().Before(deadline); i++ {
				res, err := e.Call(context.Background(), wield.Call{Tool: "echo", Arguments: args, Caller: caller})
				if err != nil {
					fmt.Println("call:", err)
					os.Exit(2)
				}
				// One write(2) per line: the parent sees it at once.
				os.Stdout.WriteString("returned " + res.CallID + "\n")
			}
		})
	}
	wg.Wait()
}
