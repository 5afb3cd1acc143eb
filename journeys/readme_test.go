//go:build unix

package journeys

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// shBlocks are the README's ```sh blocks, each a list of its command lines
// (comments and blank lines dropped).
func shBlocks(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur)
			in = false
		case in:
			if cmd := stripComment(line); cmd != "" {
				cur = append(cur, cmd)
			}
		}
	}
	return blocks
}

// stripComment drops a shell comment (a # at the start or after a space,
// outside quotes) and surrounding space.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

// readmeSection is the ```yaml block that follows the line containing after.
func readmeYAML(t *testing.T, after string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("README has no %q", after)
	}
	s = s[i:]
	j := strings.Index(s, "```yaml\n")
	k := strings.Index(s[j+8:], "```")
	if j < 0 || k < 0 {
		t.Fatalf("README has no yaml block after %q", after)
	}
	return s[j+8 : j+8+k]
}

// copyTree copies the repository folder src to dst under the user's folder.
func (u *user) copyTree(src, dst string) {
	u.t.Helper()
	root := filepath.Join("..", src)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		u.write(filepath.Join(dst, rel), string(b))
		return nil
	})
	if err != nil {
		u.t.Fatal(err)
	}
}

// sh runs a command line as the user's shell would, in the working folder.
func (u *user) sh(line, stdin string) *run {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir, cmd.Env = u.dir, u.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := &run{args: []string{line}, stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		u.t.Fatalf("still running after %v, killed:\n%s", commandLimit, r)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatal(err)
	}
	return r
}

// ensureDatabase creates the PostgreSQL database name when it is missing.
func ensureDatabase(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	needService(t, "PostgreSQL", err)
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, "CREATE DATABASE "+name)
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") {
		t.Fatal(err)
	}
}

// TestJourneyReadmeCommands runs the README's command-line section as a
// newcomer types it, in order, in a fresh checkout (the built binary as
// ./wield, the repository's examples beside it, no wield.yaml of their own:
// a command naming one failed so): every command exits 0 and prints what
// its comment promises. The README's wield.yaml, written once they have
// one, passes wield validate.
func TestJourneyReadmeCommands(t *testing.T) {
	blocks := shBlocks(t)
	if len(blocks) < 2 {
		t.Fatalf("README has %d sh blocks, want the quick start and the command line", len(blocks))
	}
	u := newUser(t)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.path("wield"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// A fresh checkout: what the commands name must be in it (no
	// wield.yaml of the user's own yet).
	u.copyTree("examples", "examples")
	readme, _ := os.ReadFile(filepath.Join("..", "README.md"))
	u.write("README.md", string(readme))
	u.write("reply.txt", "<tool_call>\n  <name>say</name>\n  <params>\n    <message><![CDATA[007]]></message>\n  </params>\n</tool_call>\n")
	ensureDatabase(t, "wield")
	model, haveModel := newFakeModel(t, "127.0.0.1:11434", reply(completion("Hello from the model.")))

	// What a command's comment promises beyond exit 0, by a part of it.
	checks := map[string]func(r *run) string{
		"call echo message=hello": func(r *run) string { return want(r.stdout, `"message": "hello"`) },
		"2 * (3 + 4)":             func(r *run) string { return want(r.stdout, `"result": 14`) },
		"message:=42":             func(r *run) string { return want(r.stdout, `"message": "42"`) },
		"timezone=Asia/Tokyo":     func(r *run) string { return want(r.stdout, `Asia/Tokyo`) },
		"--dry-run":               func(r *run) string { return want(r.stdout, "dry run of calculator: would run") },
		"calls --conversation c1": func(r *run) string { return want(r.stdout, "current_time") },
		"stats --conversation c1": func(r *run) string { return want(r.stdout, `"total_calls": 1`) },
		"./wield stats$":          func(r *run) string { return want(r.stdout, "echo") },
		"list --tools":            func(r *run) string { return want(r.stdout, "word_count") },
		"call word_count":         func(r *run) string { return want(r.stdout, `"ok": true`) },
		"| ./wield parse$":        func(r *run) string { return want(r.stdout, `"message": "hi"`) },
		"< reply.txt":             func(r *run) string { return want(r.stdout, `"007"`) },
		"./wield chat":            func(r *run) string { return want(r.stdout, "Hello from the model.") },
		"list --tag math":         func(r *run) string { return want(r.stdout, "calculator") },
		"list --config":           func(r *run) string { return want(r.stdout, "word_count") },
	}
	for _, line := range blocks[1] {
		if line == "go build -o wield ./cmd/wield" {
			continue // the journey's binary is that build
		}
		if strings.Contains(line, "./wield chat") && !haveModel {
			t.Logf("skipped (127.0.0.1:11434 is taken, the fake model cannot listen there): %s", line)
			continue
		}
		stdin := ""
		if strings.Contains(line, "./wield chat") {
			stdin = "Hello\n"
		}
		r := u.sh(line, stdin)
		if r.code != 0 {
			t.Errorf("want exit 0:\n%s", r)
			continue
		}
		for part, check := range checks {
			if strings.Contains(line+"$", part) {
				if msg := check(r); msg != "" {
					t.Errorf("%s:\n%s", msg, r)
				}
			}
		}
	}
	if haveModel && len(model.requests()) == 0 {
		t.Errorf("wield chat never asked the model")
	}
	u.write("mine/wield.yaml", readmeYAML(t, "A `wield.yaml`"))
	if r := u.sh("./wield validate mine/wield.yaml", ""); r.code != 0 {
		t.Errorf("the README's wield.yaml: want exit 0:\n%s", r)
	}
}

func want(out, part string) string {
	if strings.Contains(out, part) {
		return ""
	}
	return "output lacks " + part
}

// TestJourneyQuickStart runs the README's first command, `wield serve` with
// its embedded defaults, as a newcomer does on a fresh machine: it listens
// on 127.0.0.1:7420 with the built-in tools and SQLite under the user's
// state folder, answers a call, and exits 0 within 5 s of SIGTERM.
func TestJourneyQuickStart(t *testing.T) {
	blocks := shBlocks(t)
	if len(blocks) == 0 || !strings.HasPrefix(blocks[0][0], "go run ./cmd/wield serve") {
		t.Fatalf("README's first command is not `go run ./cmd/wield serve`: %q", blocks)
	}
	if l, err := net.Listen("tcp", "127.0.0.1:7420"); err != nil {
		t.Skipf("127.0.0.1:7420 is taken: %v", err)
	} else {
		l.Close()
	}
	u := newUser(t)
	addr := filepath.Join(t.TempDir(), "addr")
	// --addr-file only tells the journey when it listens; the address is
	// the default.
	s := u.start(addr, "serve", "--addr-file", addr)
	if s.url != "http://127.0.0.1:7420" {
		t.Errorf("serve listens on %s, want http://127.0.0.1:7420", s.url)
	}
	if code, body := s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"first run"}}`); code != 200 || !strings.Contains(string(body), "first run") {
		t.Errorf("POST /v1/tools/echo/call: %d %s", code, body)
	}
	if code, body := s.do("GET", "/", ""); code != 200 || !strings.Contains(string(body), "<html") {
		t.Errorf("GET / (the console): %d %.200s", code, body)
	}
	code, took := s.stop(syscall.SIGTERM, 10*time.Second)
	if code != 0 || took > 5*time.Second {
		t.Errorf("after SIGTERM: exit %d after %v, want 0 within 5 s\n%s", code, took, s.stderr)
	}
	if _, err := os.Stat(filepath.Join(u.dir, ".state", "wield", "wield.db")); err != nil {
		t.Errorf("no records under the user's state folder: %v", err)
	}
}

// TestReadmeListsJourneys keeps the README's list of journeys true: every
// journey of this folder has its line there, and every line names one.
func TestReadmeListsJourneys(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(TestJourney\\w+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = true
	}
	files, _ := filepath.Glob("*_test.go")
	defined := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^func (TestJourney\w+)\(`).FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
			if !listed[m[1]] {
				t.Errorf("%s: journey %s has no line in README's Journeys table", f, m[1])
			}
		}
	}
	for name := range listed {
		if !defined[name] {
			t.Errorf("README lists %s, which no journey defines", name)
		}
	}
}
