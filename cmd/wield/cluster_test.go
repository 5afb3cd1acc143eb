package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/postgres"
)

// meter is the tools' far end: it counts the calls in flight, in all and by
// kind and by server, and remembers the most it saw at once.
type meter struct {
	mu                 sync.Mutex
	global, http       int
	maxGlobal, maxHTTP int
	byServer           map[string]int
	served             atomic.Int64
	hold               time.Duration
}

func (m *meter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, server := r.URL.Query().Get("kind"), r.Header.Get("X-Server")
	m.mu.Lock()
	m.global++
	m.maxGlobal = max(m.maxGlobal, m.global)
	if kind == "http" {
		m.http++
		m.maxHTTP = max(m.maxHTTP, m.http)
	}
	m.byServer[server]++
	m.mu.Unlock()
	time.Sleep(m.hold) // the tool's work
	m.mu.Lock()
	m.global--
	if kind == "http" {
		m.http--
	}
	m.byServer[server]--
	m.mu.Unlock()
	m.served.Add(1)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"done":true}`)
}

func (m *meter) inFlight(server string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byServer[server]
}

// TestCluster runs three `wield serve` processes sharing the machine's
// PostgreSQL and Redis, puts load on all of them, kills one mid-load, and
// checks the promises: the global and bucket limits are never exceeded
// (as the tools measure them), every acknowledged call has its record, and
// the dead server's slots come back within the lease time.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three servers")
	}
	dsn, schema := postgresSchema(t, "cluster_")
	dir := t.TempDir()
	bin := filepath.Join(dir, "wield")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	m := &meter{byServer: map[string]int{}, hold: 15 * time.Millisecond}
	far := httptest.NewServer(m)
	defer far.Close()

	const ttl = 2 * time.Second
	prefix := "wield-test-" + wield.NewID()
	names := []string{"s1", "s2", "s3"}
	var procs []*exec.Cmd
	var urls []string
	for _, name := range names {
		sdir := filepath.Join(dir, name)
		tools := filepath.Join(sdir, "tools")
		os.MkdirAll(tools, 0o755)
		for _, kind := range []string{"http", "network"} {
			tool := fmt.Sprintf(`name: work_%[1]s
description: Do some work of kind %[1]s
category: %[1]s
entry:
  type: http
  method: GET
  url: "%[2]s/work?kind=%[1]s"
  headers: {X-Server: %[3]s}
  timeout: 30s
`, kind, far.URL, name)
			os.WriteFile(filepath.Join(tools, kind+".yaml"), []byte(tool), 0o644)
		}
		cfg := fmt.Sprintf(`tool_dirs: [tools]
http_allow: [127.0.0.1/32]
concurrency: {backend: redis, max: 4, queue_size: 1000, queue_timeout: 60s, buckets: {http: {limit: 2}}}
redis: {url: "redis://127.0.0.1:6379/0", prefix: %q, lease_ttl: 2s, share_events: true}
`, prefix)
		os.WriteFile(filepath.Join(sdir, "wield.yaml"), []byte(cfg), 0o644)
		addrFile := filepath.Join(sdir, "addr")
		cmd := exec.Command(bin, "serve", "--config", filepath.Join(sdir, "wield.yaml"), "--addr", "127.0.0.1:0", "--addr-file", addrFile,
			"--db", dsn+"&wield_schema="+schema, "--keys", filepath.Join(sdir, "keys.json"), "--log-level", "warn")
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+sdir)
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
			if t.Failed() {
				t.Logf("%s log:\n%s", name, logs.String())
			}
		})
		procs = append(procs, cmd)
		addr, err := clusterAddr(addrFile, exited, 60*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err) // its log follows, from the cleanup
		}
		urls = append(urls, "http://"+addr)
	}

	// Server 1's event stream shows the calls of the others too.
	sctx, stopSSE := context.WithCancel(context.Background())
	defer stopSSE()
	fromOthers := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(sctx, "GET", urls[0]+"/v1/events?type=execution_completed", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(line, `"server":"`) {
				select {
				case fromOthers <- line:
				default:
				}
			}
		}
	}()

	var dead [3]atomic.Bool
	var acked sync.Map // call id -> server
	var ackCount, failed atomic.Int64
	client := &http.Client{Timeout: 60 * time.Second}
	callOnce := func(i, c int) {
		for try := range 3 {
			s := (i + c + try) % 3
			if dead[s].Load() {
				continue
			}
			tool := "work_http"
			if (i+c)%2 == 1 {
				tool = "work_network"
			}
			resp, err := client.Post(urls[s]+"/v1/tools/"+tool+"/call", "application/json", strings.NewReader(`{"arguments":{}}`))
			if err != nil {
				continue // the server died under us: not acknowledged
			}
			var res struct {
				CallID string `json:"call_id"`
				OK     bool   `json:"ok"`
				Error  string `json:"error"`
			}
			err = json.NewDecoder(resp.Body).Decode(&res)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				continue
			}
			if !res.OK {
				failed.Add(1)
				t.Errorf("call on %s failed: %s", names[s], res.Error)
				return
			}
			acked.Store(res.CallID, names[s])
			ackCount.Add(1)
			return
		}
	}
	const clients, perClient = 24, 20
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range perClient {
				callOnce(i, c)
			}
		})
	}
	// Kill s2 (SIGKILL: no goodbye, its leases stay in Redis) while it
	// has calls in flight.
	deadline := time.Now().Add(30 * time.Second)
	for m.inFlight("s2") == 0 || m.served.Load() < 60 {
		if time.Now().After(deadline) {
			t.Fatal("s2 never had calls in flight")
		}
		time.Sleep(2 * time.Millisecond)
	}
	dead[1].Store(true)
	procs[1].Process.Signal(syscall.SIGKILL)
	killedAt := time.Now()
	wg.Wait()

	m.mu.Lock()
	maxGlobal, maxHTTP := m.maxGlobal, m.maxHTTP
	m.mu.Unlock()
	t.Logf("calls: %d acknowledged of %d made; max in flight seen by the tools: %d of 4 in all, %d of 2 in bucket http; tools ran %d times; s2 killed mid-load",
		ackCount.Load(), clients*perClient, maxGlobal, maxHTTP, m.served.Load())
	if maxGlobal > 4 || maxHTTP > 2 {
		t.Errorf("limits exceeded: %d calls at once (limit 4), %d http (limit 2)", maxGlobal, maxHTTP)
	}
	if maxGlobal < 3 {
		t.Errorf("at most %d calls at once: the load never filled the cluster", maxGlobal)
	}
	if ackCount.Load() < clients*perClient*9/10 {
		t.Errorf("only %d of %d calls acknowledged", ackCount.Load(), clients*perClient)
	}

	// Every acknowledged call has its record.
	ctx := context.Background()
	store, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	missing := 0
	acked.Range(func(k, v any) bool {
		if _, err := store.Call(ctx, k.(string)); err != nil {
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged call %s (on %s) has no record: %v", k, v, err)
			}
		}
		return true
	})
	found := 0
	acked.Range(func(any, any) bool { found++; return true })
	t.Logf("records: %d acknowledged, %d found, %d missing", ackCount.Load(), found-missing, missing)
	if missing > 0 {
		t.Errorf("%d acknowledged calls lost", missing)
	}

	// The dead server's slots come back within the lease time: the shared
	// limiter drains to zero.
	var lim struct {
		Current int `json:"current_concurrent"`
	}
	for {
		resp, err := http.Get(urls[0] + "/v1/limiter")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&lim)
			resp.Body.Close()
			if lim.Current == 0 {
				break
			}
		}
		if time.Since(killedAt) > ttl+15*time.Second {
			t.Fatalf("%d units still held %s after the kill (lease time %s)", lim.Current, time.Since(killedAt), ttl)
		}
		time.Sleep(50 * time.Millisecond)
	}

	select {
	case line := <-fromOthers:
		if !strings.Contains(line, `"server":"`) {
			t.Errorf("event %s", line)
		}
	case <-time.After(5 * time.Second):
		t.Error("s1's event stream never showed another server's call")
	}
}

// clusterAddr waits, up to limit, for a server to write its address to
// addrFile, and returns it; a server that exits first (its store refused,
// say) is an error at once, not after the whole limit.
func clusterAddr(addrFile string, exited <-chan struct{}, limit time.Duration) (string, error) {
	deadline := time.After(limit)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case <-exited:
			return "", fmt.Errorf("exited before writing its address to %s", addrFile)
		case <-deadline:
			return "", fmt.Errorf("wrote no address to %s within %v", addrFile, limit)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestClusterAddr: TestCluster's wait for a server's address ends as soon as
// the server has exited without one (it waited its whole minute), and
// returns the address a server wrote.
func TestClusterAddr(t *testing.T) {
	dir := t.TempDir()
	exited := make(chan struct{})
	close(exited)
	start := time.Now()
	addr, err := clusterAddr(filepath.Join(dir, "none"), exited, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited before writing its address") {
		t.Errorf("a server that exited: %q, %v; want the error that says so", addr, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a server that exited was waited for %v", took)
	}

	file := filepath.Join(dir, "addr")
	if err := os.WriteFile(file, []byte("127.0.0.1:4321\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if addr, err := clusterAddr(file, make(chan struct{}), time.Minute); addr != "127.0.0.1:4321" || err != nil {
		t.Errorf("a server that wrote its address: %q, %v", addr, err)
	}
	if _, err := clusterAddr(filepath.Join(dir, "none"), make(chan struct{}), 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "within 50ms") {
		t.Errorf("a server that never wrote its address: %v, want a timeout", err)
	}
}

// postgresSchema is the test's PostgreSQL ($WIELD_TEST_POSTGRES, else the
// machine's wield_test database) and a schema name of the test's own
// (prefix and a random part), dropped when the test ends.
func postgresSchema(t *testing.T, prefix string) (dsn, schema string) {
	dsn = os.Getenv("WIELD_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/wield_test?sslmode=disable"
	}
	schema = prefix + strings.ToLower(wield.NewID())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			conn.Close(ctx)
		}
	})
	return dsn, schema
}
