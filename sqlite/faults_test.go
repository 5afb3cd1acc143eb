//go:build unix

package sqlite_test

// Disk full. A tiny tmpfs or loop filesystem needs root (CAP_SYS_ADMIN),
// which CI and developers' machines do not always give a test, so the
// disk fills another way: a child process lowers its own RLIMIT_FSIZE (what
// `ulimit -f` sets) to a little above the database's size, and every write
// past it fails with EFBIG, as a write to a full disk fails with ENOSPC.
// The Go runtime ignores SIGXFSZ, so the write returns the error instead of
// killing the process. The child then raises the limit again (a soft limit
// may go back up to the hard one without privilege), as when space is freed.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// diskFullEnv names the database and the mode ("sync" or "async") of the
// child process, as "mode:path"; the child test runs only when it is set.
const diskFullEnv = "WIELD_SQLITE_DISKFULL_CHILD"

// TestFaultDiskFull runs calls into a store whose disk fills up, in a child
// process, then frees the space. In sync mode a call made while the disk is
// full fails as a system error (Call returns an error, never an
// acknowledged result whose record is lost) and calls work again once there
// is room. In async mode calls are acknowledged at once (the documented
// loss window is only a crash's), so the records written while the disk was
// full must be kept, retried and written once there is room. Either way
// every call the child saw acknowledged is in the store afterwards, and
// the database is intact.
func TestFaultDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for _, mode := range []string{"sync", "async"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wield.db")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFaultDiskFullChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), diskFullEnv+"="+mode+":"+path)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var acked, failed []string
			var full, after int
			var phases []string
			sc := bufio.NewScanner(out)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				f := strings.SplitN(sc.Text(), " ", 3)
				switch f[0] {
				case "acked":
					acked = append(acked, f[1])
					if len(phases) > 0 && phases[len(phases)-1] == "room" {
						after++
					}
				case "failed":
					failed = append(failed, f[1])
					if len(f) > 2 && len(failed) <= 3 {
						t.Logf("system error while the disk is full: %s", f[2])
					}
				case "phase":
					phases = append(phases, f[1])
					if f[1] == "room" {
						full = len(failed)
					}
				default:
					t.Logf("child: %s", sc.Text())
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v\nstderr:\n%s", err, stderr.String())
			}
			t.Logf("phases %v: %d calls acknowledged (%d after room was made), %d failed as system errors", phases, len(acked), after, len(failed))
			if want := []string{"full", "room", "closed"}; strings.Join(phases, ",") != strings.Join(want, ",") {
				t.Fatalf("phases %v, want %v\nstderr:\n%s", phases, want, stderr.String())
			}
			if mode == "sync" && full == 0 {
				t.Errorf("no call failed while the disk was full")
			}
			if after == 0 {
				t.Errorf("no call was acknowledged after room was made")
			}

			s := open(t, path, nil)
			defer s.Close(context.Background())
			for _, id := range acked {
				r, err := s.Call(context.Background(), id)
				if err != nil {
					t.Errorf("call %s was acknowledged and is not in the store: %v", id, err)
					continue
				}
				if !r.Result.OK || len(r.Result.Output) < 32<<10 {
					t.Errorf("record of call %s: ok=%v, %d bytes of output; want the whole successful call", id, r.Result.OK, len(r.Result.Output))
				}
			}
			kept := 0
			for _, id := range failed {
				if _, err := s.Call(context.Background(), id); err == nil {
					kept++
				}
			}
			if kept > 0 {
				t.Logf("%d of the %d calls that failed as system errors were recorded all the same", kept, len(failed))
			}
			page, err := s.Calls(context.Background(), wield.CallQuery{Limit: 1})
			if err != nil {
				t.Errorf("query the store after the disk was full: %v", err)
			} else if len(page.Records) == 0 {
				t.Errorf("the store is empty")
			}
		})
	}
}

// TestFaultDiskFullChild is TestFaultDiskFull's child: it fills the disk
// (RLIMIT_FSIZE), makes calls until the store fails, frees the space, makes
// more calls, and closes the store, printing each call's outcome.
func TestFaultDiskFullChild(t *testing.T) {
	env := os.Getenv(diskFullEnv)
	if env == "" {
		t.Skip("run by TestFaultDiskFull")
	}
	mode, path, _ := strings.Cut(env, ":")
	signal.Ignore(syscall.SIGXFSZ)
	fail := func(format string, a ...any) {
		fmt.Printf("error "+format+"\n", a...)
		os.Exit(2)
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, &sqlite.Options{Async: mode == "async"})
	if err != nil {
		fail("open: %v", err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("echo", "Echo a message", echo))
	e := engine.New(reg, &engine.Options{Store: s, MaxOutput: -1})
	// Records of 32 KB and more: the limit is reached in a few dozen calls.
	message, _ := json.Marshal(echoIn{Message: strings.Repeat("x", 32<<10)})
	call := func(i int) error {
		res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: message, Caller: wield.ForConversation("agent", fmt.Sprint(i))})
		if err != nil {
			id := "-"
			if res != nil {
				id = res.CallID
			}
			fmt.Printf("failed %s %s\n", id, strings.ReplaceAll(err.Error(), "\n", " "))
			return err
		}
		fmt.Printf("acked %s\n", res.CallID)
		return nil
	}
	var size int64
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			size = max(size, fi.Size())
		}
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		fail("getrlimit: %v", err)
	}
	lim := old
	lim.Cur = uint64(size + 256<<10)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fail("setrlimit: %v", err)
	}
	fmt.Println("phase full")
	failures := 0
	for i := 0; i < 400 && failures < 10; i++ {
		if call(i) != nil {
			failures++
		}
	}
	if mode == "async" {
		// Nothing fails in the caller's sight: the writer keeps the records.
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.Flush(fctx)
		cancel()
		if err == nil {
			fail("flush succeeded while the disk was full: the limit did not bite")
		}
	} else if failures == 0 {
		fail("400 calls and no failure: the limit did not bite")
	}

	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		fail("setrlimit: %v", err)
	}
	fmt.Println("phase room")
	for i := range 20 {
		if err := call(1000 + i); err != nil {
			fail("a call after room was made: %v", err)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Flush(fctx); err != nil {
		fail("flush after room was made: %v", err)
	}
	if err := e.Close(fctx); err != nil {
		fail("close engine: %v", err)
	}
	if err := s.Close(fctx); err != nil {
		fail("close store: %v", err)
	}
	fmt.Println("phase closed")
}
