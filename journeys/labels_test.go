//go:build unix

package journeys

// Label values a client chooses do not become metric series: a client
// that calls ten thousand tool names the server does not have leaves
// /metrics with the same series and the server's memory where it was.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// vmRSS is the resident memory of process pid in KiB, from /proc.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// metricSeries returns the wield_ series of the server's /metrics page.
func metricSeries(t *testing.T, s *server) []string {
	t.Helper()
	code, body := s.do("GET", "/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	var out []string
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "wield_") {
			out = append(out, line)
		}
	}
	return out
}

// callUnknown calls n tool names the server lacks, from first on, with 4
// clients at once, and returns the first failure.
func callUnknown(s *server, first, n int) error {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		fail error
	)
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				resp, err := client.Post(fmt.Sprintf("%s/v1/tools/no_such_tool_%d/call", s.url, i), "application/json", strings.NewReader(`{"arguments":{}}`))
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error_type":"tool_not_found"`) {
						err = fmt.Errorf("call %d: %d %s", i, resp.StatusCode, body)
					}
				}
				if err != nil {
					mu.Lock()
					fail = cmpErr(fail, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := first; i < first+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return fail
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TestJourneyUnknownToolLabels: ten thousand calls of ten thousand tool
// names the server does not have add no series to /metrics (they count
// under tool="_unknown") and leave the served process's memory within 10%
// of what it was (VmRSS of /proc/PID/status).
func TestJourneyUnknownToolLabels(t *testing.T) {
	u := newUser(t)
	// Records go to PostgreSQL, out of the process: with SQLite, its page
	// cache (up to cache_size) grows with the records whatever the names,
	// about 0.7 KiB a call, which would hide what the names cost.
	s := u.serve("--db", postgresURL(t))
	pid := s.cmd.Process.Pid

	// Warm up: the server's caches, the store and the series of the
	// unknown label and of the routes exist from here.
	if err := callUnknown(s, 0, 2000); err != nil {
		t.Fatal(err)
	}
	metricSeries(t, s)
	before := metricSeries(t, s)
	rssBefore := vmRSS(t, pid)

	start := time.Now()
	if err := callUnknown(s, 2000, 10_000); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	after := metricSeries(t, s)
	if len(after) != len(before) {
		t.Errorf("after 10,000 unknown tool names /metrics has %d series, before %d", len(after), len(before))
	}
	page := strings.Join(after, "\n")
	if !strings.Contains(page, `wield_calls_total{outcome="tool_not_found",tool="_unknown"} 12000`) {
		t.Errorf("the calls are not counted under _unknown:\n%s", grepLines(page, "wield_calls_total"))
	}
	if strings.Contains(page, "no_such_tool") {
		t.Error("/metrics carries a client's tool name")
	}
	var rss int
	if !eventually(20*time.Second, func() bool { rss = vmRSS(t, pid); return rss <= rssBefore*11/10 }) {
		t.Errorf("VmRSS %d KiB after the calls, %d KiB before: more than 10%% more", rss, rssBefore)
	}
	t.Logf("10,000 calls in %v; VmRSS %d KiB before, %d KiB after; %d series", took, rssBefore, rss, len(after))
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit %d after %v:\n%s", code, took, s.stderr)
	}
}

func grepLines(page, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
