package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/racedetect"
)

// TestMemoryOutsideGo bounds what the store holds in memory that is not
// Go's: SQLite's page caches, in modernc's C heap. It writes about 48 MB of
// records (more than any cache the store ever had), reads them back through
// the readers, and checks the anonymous memory of the process beyond what
// Go's runtime has mapped. With the 32 MiB writer cache and 16 MiB reader
// caches the store once had (most of the memory of `wield serve` under
// load), it grew by 84 MiB; with 2 MiB caches, by 22-25 MiB (the rest is
// modernc's C heap: statements, bound values, and what its allocator
// keeps of freed memory). The bound sits between.
func TestMemoryOutsideGo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if racedetect.Enabled {
		t.Skip("the race detector's shadow memory is anonymous memory Go does not account for")
	}
	if testing.Short() {
		t.Skip("writes 48 MB")
	}
	before := outsideGo(t)
	s := open(t, filepath.Join(t.TempDir(), "wield.db"), nil)
	defer s.Close(context.Background())
	ctx := context.Background()
	out, _ := json.Marshal(strings.Repeat("x", 8<<10))
	const records, writers = 6000, 8
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range records / writers {
				id := wield.NewID()
				r := &wield.Record{
					Call:     &wield.Call{ID: id, Tool: "echo", Caller: wield.ForConversation("agent", fmt.Sprintf("conv-%d", i%100))},
					Result:   &wield.Result{CallID: id, Tool: "echo", OK: true, Output: out},
					QueuedAt: time.Now(),
				}
				if err := s.Save(ctx, r); err != nil {
					t.Errorf("writer %d: Save: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Every reader reads every record: pages of each conversation, at once.
	for c := range 100 {
		wg.Go(func() {
			q := wield.CallQuery{ConversationID: fmt.Sprintf("conv-%d", c), Limit: 100}
			if _, err := s.Calls(ctx, q); err != nil {
				t.Errorf("Calls: %v", err)
			}
		})
	}
	wg.Wait()
	if _, err := s.Statistics(ctx, wield.StatsQuery{}); err != nil {
		t.Fatal(err)
	}
	grown := outsideGo(t) - before
	t.Logf("anonymous memory outside Go's runtime grew by %.1f MiB", float64(grown)/(1<<20))
	if grown > 40<<20 {
		t.Errorf("after %d records of 8 KB, the store holds %.1f MiB outside Go's heap, want at most 40 (page caches of 2 MiB per connection)", records, float64(grown)/(1<<20))
	}
}

// outsideGo returns the process's anonymous resident memory less the
// memory Go's runtime has mapped and not released.
func outsideGo(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var anon int64 = -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("RssAnon %q: %v", v, err)
			}
			anon = kb << 10
		}
	}
	if anon < 0 {
		t.Fatal("no RssAnon in /proc/self/status")
	}
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	return anon - int64(m[0].Value.Uint64()-m[1].Value.Uint64())
}
