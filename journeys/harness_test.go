//go:build unix

package journeys

// The harness: the binary built once, a user with a home of their own, the
// program run and served as a person runs it, and the services journeys
// share. Every wait here is bounded.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// bin is the wield binary built from this tree for the whole suite, in
// binDir, where the other programs journeys build once go too.
var bin, binDir string

// waitBound is how many journeys that call t.Parallel run at once when
// -parallel is not given. Those are the ones that spend seconds waiting on
// the programs they run (a task's lease, a grace period, a tool's nap, an
// idle session's expiry) while using little CPU, so more of them overlap
// than the default of one per core; journeys with tight time bounds, and
// those that load the CPU or measure memory under a flood, stay serial.
const waitBound = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(waitBound)); err != nil {
			fmt.Fprintln(os.Stderr, "journeys:", err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "wield-journeys-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "journeys:", err)
		os.Exit(1)
	}
	binDir = dir
	bin = filepath.Join(dir, "wield")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wield")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "journeys: build wield:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// commandLimit bounds one command of a journey: a command still running
// then is killed and the journey fails.
const commandLimit = 90 * time.Second

// user is a person at a shell: a working folder, a home and a state folder
// of their own (so records, keys and pins go to the defaults under it), and
// no WIELD_* variables but the ones the journey sets.
type user struct {
	t   *testing.T
	dir string // the working folder; relative paths are relative to it
	env []string
}

func newUser(t *testing.T) *user {
	t.Helper()
	dir := t.TempDir()
	u := &user{t: t, dir: dir}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "WIELD_") || strings.HasPrefix(k, "XDG_") || k == "HOME" {
			continue
		}
		u.env = append(u.env, kv)
	}
	u.env = append(u.env, "HOME="+filepath.Join(dir, ".home"), "XDG_STATE_HOME="+filepath.Join(dir, ".state"))
	return u
}

// setenv sets a variable for every later command.
func (u *user) setenv(k, v string) { u.env = append(u.env, k+"="+v) }

// path is a path under the working folder.
func (u *user) path(rel string) string { return filepath.Join(u.dir, rel) }

// write writes a file under the working folder, making its folders.
func (u *user) write(rel, content string) {
	u.t.Helper()
	p := u.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		u.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		u.t.Fatal(err)
	}
}

// copy copies a file of testdata, byte for byte, to rel under the working
// folder: how a user puts an example where it goes.
func (u *user) copy(testdata, rel string) {
	u.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", testdata))
	if err != nil {
		u.t.Fatal(err)
	}
	u.write(rel, string(b))
}

// run is one finished command.
type run struct {
	args           []string
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r *run) String() string {
	return fmt.Sprintf("wield %s: exit %d after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// json decodes the command's stdout.
func (r *run) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not JSON (%v):\n%s", err, r)
	}
}

// wield runs the binary with args in the working folder, with empty stdin.
func (u *user) wield(args ...string) *run {
	u.t.Helper()
	return u.wieldIn("", args...)
}

// wieldIn runs the binary with args, stdin given.
func (u *user) wieldIn(stdin string, args ...string) *run {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = u.dir, u.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := &run{args: args, stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		u.t.Fatalf("still running after %v, killed:\n%s", commandLimit, r)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("wield %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// must runs the binary and fails the journey unless it exits 0.
func (u *user) must(args ...string) *run {
	u.t.Helper()
	r := u.wield(args...)
	if r.code != 0 {
		u.t.Fatalf("want exit 0:\n%s", r)
	}
	return r
}

// lockedBuffer collects a running program's output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running `wield serve` (or `wield mcp --http`).
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT
	stderr *lockedBuffer
	stdout *lockedBuffer
	done   chan struct{}
	code   int
}

// serve starts `wield serve` with args, on 127.0.0.1 with a port of its own,
// and returns once it listens (within a minute). The journey's end kills it
// if it still runs.
func (u *user) serve(args ...string) *server {
	u.t.Helper()
	addrFile := filepath.Join(u.t.TempDir(), "addr")
	return u.start(addrFile, append([]string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
}

// start starts the binary with args, which must make it write its address
// to addrFile, and waits for that.
func (u *user) start(addrFile string, args ...string) *server {
	u.t.Helper()
	return u.launch(args, func(s *server) bool {
		if b, err := os.ReadFile(addrFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			s.url = "http://" + strings.TrimSpace(string(b))
			return true
		}
		return false
	})
}

// mcpHTTP starts `wield mcp --http 127.0.0.1:0` with args and returns once
// it listens; its url is the server's (the endpoint is url+"/mcp").
func (u *user) mcpHTTP(args ...string) *server {
	u.t.Helper()
	return u.launch(append([]string{"mcp", "--http", "127.0.0.1:0"}, args...), func(s *server) bool {
		for line := range strings.Lines(s.stderr.String()) {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
				s.url = strings.TrimSuffix(rest, "/mcp")
				return true
			}
		}
		return false
	})
}

// launch starts the binary with args and waits (up to a minute) until
// listening reports it listens, having set the server's url. The journey's
// end kills it if it still runs.
func (u *user) launch(args []string, listening func(*server) bool) *server {
	u.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = u.dir, u.env
	s := &server{t: u.t, cmd: cmd, stderr: &lockedBuffer{}, stdout: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		s.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			s.code = ee.ExitCode()
		}
		close(s.done)
	}()
	u.t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if listening(s) {
			return s
		}
		select {
		case <-s.done:
			u.t.Fatalf("wield %s exited with %d before listening:\n%s", strings.Join(args, " "), s.code, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("wield %s did not listen within a minute:\n%s", strings.Join(args, " "), s.stderr)
		}
	}
}

// stop sends sig and waits up to limit for the exit: the exit code and how
// long the exit took. A program still running then fails the journey (and is
// killed).
func (s *server) stop(sig syscall.Signal, limit time.Duration) (code int, took time.Duration) {
	s.t.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-s.done:
		return s.code, time.Since(start)
	case <-time.After(limit):
		_ = s.cmd.Process.Kill()
		<-s.done
		s.t.Fatalf("still running %v after %v (killed):\n%s", limit, sig, s.stderr)
		return -1, limit
	}
}

// exited reports whether the program has ended.
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// do sends a request with a JSON body (none when body is ""), with headers
// given as "Name: value", and returns the status and body.
func (s *server) do(method, path, body string, headers ...string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	c := &http.Client{Timeout: commandLimit}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v\nserver stderr:\n%s", method, path, err, s.stderr)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// eventually polls cond every 20 ms until it holds or limit passes, and
// reports whether it held.
func eventually(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// needService skips the journey when a service it uses cannot be reached,
// or fails it in CI, where the test command starts every service.
func needService(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is needed in CI (scripts/test starts it): %v", what, err)
	}
	t.Skipf("%s unreachable, skipping: %v", what, err)
}

// randomName is a fresh lowercase name with prefix.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// postgresURL is a fresh database on the machine's PostgreSQL
// (127.0.0.1:5432, or $WIELD_TEST_POSTGRES's server), dropped at the end of
// the journey.
func postgresURL(t *testing.T) string {
	t.Helper()
	base := cmpOr(os.Getenv("WIELD_TEST_POSTGRES"), "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	needService(t, "PostgreSQL", err)
	defer admin.Close(context.Background())
	name := randomName("journey_")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

// redisURL is the machine's Redis (127.0.0.1:6379) and a key prefix of the
// journey's own.
func redisURL(t *testing.T) (url, prefix string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:6379", 5*time.Second)
	needService(t, "Redis", err)
	c.Close()
	return "redis://127.0.0.1:6379/0", randomName("journey")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// listed reports whether the tool named appears in /v1/tools within limit
// (an imported server's tools come after wield serve listens).
func (s *server) listed(name string, limit time.Duration) bool {
	s.t.Helper()
	return eventually(limit, func() bool {
		_, body := s.do("GET", "/v1/tools", "")
		return bytes.Contains(body, []byte(`"`+name+`"`))
	})
}
