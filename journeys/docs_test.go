//go:build unix

package journeys

// Journeys that run the reference pages' examples (docs/*.md) as they are
// written there, read out of the page itself, so that a page cannot drift
// from what the binary does.

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docPage is the text of docs/NAME.
func docPage(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docCommand is one "$ " line of a console block of a page, with the lines
// printed after it.
type docCommand struct {
	line  int    // 1-based, in the page
	block int    // which console block of the page, from 0
	cmd   string // without the "$ "
	out   []string
}

// docCommands returns the commands of the page's console blocks, in order.
func docCommands(text string) []docCommand {
	var out []docCommand
	in, block := false, -1
	for i, line := range strings.Split(text, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```console"):
			in = true
			block++
		case in && strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "$ "):
			out = append(out, docCommand{line: i + 1, block: block, cmd: line[2:]})
		case in && len(out) > 0 && out[len(out)-1].block == block:
			out[len(out)-1].out = append(out[len(out)-1].out, line)
		}
	}
	return out
}

// docNamedRe is a line that names the file of the block after it: it
// begins with the file's path in backquotes and ends with a colon
// ("`tools/web_search.yaml`:").
var docNamedRe = regexp.MustCompile("^`([^`]+)`.*:$")

// docFiles returns the files a page gives: each fenced block right after a
// line that names it (docNamedRe), and what a `cat FILE` command prints.
func docFiles(text string) map[string]string {
	files := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := docNamedRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || !strings.HasPrefix(lines[j], "```") {
			continue
		}
		var body []string
		for j++; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			body = append(body, lines[j])
		}
		files[m[1]] = strings.Join(body, "\n") + "\n"
		i = j
	}
	for _, c := range docCommands(text) {
		if name, ok := strings.CutPrefix(c.cmd, "cat "); ok {
			files[name] = strings.Join(c.out, "\n") + "\n"
		}
	}
	return files
}

// shellWords splits a command line as a POSIX shell does for the forms the
// pages use: words separated by blanks, 'single quotes' kept literally,
// "double quotes" with \" \\ \$ escapes, and $NAME expanded from vars (in
// bare words and double quotes) to its value, or to "" when it has none.
func shellWords(line string, vars map[string]string) []string {
	var words []string
	var cur strings.Builder
	have := false
	expand := func(s string, i int) int { // s[i] == '$': expand, return the index after the name
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			cur.WriteByte('$')
			return j
		}
		cur.WriteString(vars[s[i+1:j]])
		return j
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
			i++
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				end = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+end])
			have = true
			i += end + 2
		case c == '"':
			have = true
			for i++; i < len(line) && line[i] != '"'; {
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`, line[i+1]) >= 0:
					cur.WriteByte(line[i+1])
					i += 2
				case line[i] == '$':
					i = expand(line, i)
				default:
					cur.WriteByte(line[i])
					i++
				}
			}
			i++
		case c == '$':
			have = true
			i = expand(line, i)
		default:
			have = true
			cur.WriteByte(c)
			i++
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// TestJourneyDocsCallFormats runs every command of docs/call-formats.md
// through the binary, with the files the page gives, and holds its output
// (stdout, then stderr) and exit code to what the page prints.
func TestJourneyDocsCallFormats(t *testing.T) {
	text := docPage(t, "call-formats.md")
	u := newUser(t)
	files := docFiles(text)
	for _, want := range []string{"tool_call.xml", "in_nested.txt", "in.txt", "in_jsonfmt.txt", "tools/save_file.yaml", "tools/web_search.yaml", "tools/research.toolset.yaml", "in_cut.txt"} {
		if _, ok := files[want]; !ok {
			t.Fatalf("docs/call-formats.md no longer gives %s (a line \"`%s`:\" before its block, or `cat %s`)", want, want, want)
		}
	}
	for name, content := range files {
		u.write(name, content)
	}
	cmds := docCommands(text)
	if len(cmds) < 15 {
		t.Fatalf("docs/call-formats.md has %d commands; it had 22", len(cmds))
	}
	pipeRe := regexp.MustCompile(`^echo '([^']*)' \| wield (.*)$`)
	last := -1
	for _, c := range cmds {
		var stdin string
		var args []string
		switch {
		case strings.HasPrefix(c.cmd, "cat "):
			continue // its output is the file, written above
		case c.cmd == "echo $?":
			if want := strings.Join(c.out, "\n"); want != strconv.Itoa(last) {
				t.Errorf("docs/call-formats.md:%d: the page says the exit code was %s, it was %d", c.line, want, last)
			}
			continue
		case pipeRe.MatchString(c.cmd):
			m := pipeRe.FindStringSubmatch(c.cmd)
			stdin, args = m[1]+"\n", shellWords(m[2], nil)
		case strings.HasPrefix(c.cmd, "wield "):
			cmd, in, redirected := strings.Cut(strings.TrimPrefix(c.cmd, "wield "), " < ")
			args = shellWords(cmd, nil)
			if redirected {
				content, ok := files[in]
				if !ok {
					t.Fatalf("docs/call-formats.md:%d: %s reads %s, which the page does not give", c.line, c.cmd, in)
				}
				stdin = content
			}
		default:
			t.Fatalf("docs/call-formats.md:%d: %q is a command this journey does not know how to run: teach it, so that the example is run", c.line, c.cmd)
		}
		r := u.wieldIn(stdin, args...)
		last = r.code
		got := strings.TrimSuffix(r.stdout+r.stderr, "\n")
		if want := strings.Join(c.out, "\n"); got != want {
			t.Errorf("docs/call-formats.md:%d: $ %s\nthe page prints:\n%s\nthe binary printed:\n%s", c.line, c.cmd, want, got)
		}
		if r.code != 0 && r.code != 1 {
			t.Errorf("docs/call-formats.md:%d: $ %s: exit %d\n%s", c.line, c.cmd, r.code, r)
		}
	}
}

// docKeyRe and docWhenRe are what differs between two runs of the keys
// example: key IDs, where the keys file is, when a key was made.
var (
	docKeyRe  = regexp.MustCompile(`key_[0-9a-f]{12}`)
	docFileRe = regexp.MustCompile(` in \S+keys\.json;`)
	docWhenRe = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`)
)

func docSameRun(s string) string {
	s = docKeyRe.ReplaceAllString(s, "key_ID")
	s = docFileRe.ReplaceAllString(s, " in KEYS;")
	return docWhenRe.ReplaceAllString(s, "WHEN")
}

// docCurl runs a curl command of a page (-s, -i, -H, -X, -d and the URL;
// $NAME expanded from vars) against s instead of the page's address, and
// returns what curl prints: the body, or with -i the status line and the
// body (the pages cut headers with sed).
func docCurl(t *testing.T, s *server, line string, vars map[string]string) (status int, printed string) {
	t.Helper()
	words := shellWords(line, vars)
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("not a curl command: %s", line)
	}
	method, body, url := "GET", "", ""
	var headers []string
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s", "-i":
		case "-H":
			i++
			headers = append(headers, words[i])
		case "-X":
			i++
			method = words[i]
		case "-d":
			i++
			body = words[i]
			if method == "GET" {
				method = "POST"
			}
		default:
			if strings.HasPrefix(w, "-") {
				t.Fatalf("curl option %s is one this journey does not know: %s", w, line)
			}
			url = w
		}
	}
	_, path, ok := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	if !ok {
		t.Fatalf("no path in %s", line)
	}
	req := []string{}
	hasType := false
	for _, h := range headers {
		if strings.HasPrefix(strings.ToLower(h), "content-type:") {
			hasType = true
		}
		req = append(req, h)
	}
	if body != "" && !hasType {
		// curl -d sends a form's type; the pages always say
		// application/json, which s.do sets.
		t.Fatalf("a body without Content-Type: %s", line)
	}
	code, b := s.do(method, "/"+path, body, req...)
	return code, strings.TrimSuffix(string(b), "\n")
}

// TestJourneyDocsFirstKey follows docs/rest-api.md's keys example with the
// page's own commands: a server started without keys, then the page's
// `wield keys create` lines, whose first says (on stderr, as the page
// prints it) that such a server goes on answering without keys until it is
// restarted, which it does; Ctrl-C ends it at once, and once started again
// it asks for a key, answering the page's curl commands as the page says.
func TestJourneyDocsFirstKey(t *testing.T) {
	text := docPage(t, "rest-api.md")
	u := newUser(t)
	for _, f := range []string{"say.json", "utc_date.yaml", "word_count.yaml", "basics.toolset.yaml", "helper.agent.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "tools", f))
		if err != nil {
			t.Fatal(err)
		}
		u.write(filepath.Join("tools", f), string(b))
	}
	b, err := os.ReadFile(filepath.Join("..", "examples", "wield.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u.write("wield.yaml", string(b))

	s := u.serve("--config", "wield.yaml")

	// The keys block: the commands up to the restart.
	var keysBlock, afterBlock []docCommand
	cmds := docCommands(text)
	for i, c := range cmds {
		if c.cmd == "AG=$(wield keys create --name agent --rights call)" {
			for _, d := range cmds[i:] {
				if d.block == c.block {
					keysBlock = append(keysBlock, d)
				} else if d.block == c.block+1 {
					afterBlock = append(afterBlock, d)
				}
			}
			break
		}
	}
	if len(keysBlock) < 4 || len(afterBlock) < 5 {
		t.Fatalf("docs/rest-api.md: the keys example is not where it was (%d commands, then %d)", len(keysBlock), len(afterBlock))
	}
	assignRe := regexp.MustCompile(`^(\w+)=\$\(wield (.*)\)$`)
	vars := map[string]string{}
	for _, c := range keysBlock {
		var args []string
		name := ""
		if m := assignRe.FindStringSubmatch(c.cmd); m != nil {
			name, args = m[1], shellWords(m[2], vars)
		} else if rest, ok := strings.CutPrefix(c.cmd, "wield "); ok {
			args = shellWords(rest, vars)
		} else {
			t.Fatalf("docs/rest-api.md:%d: %q is not a wield command", c.line, c.cmd)
		}
		r := u.wield(args...)
		if r.code != 0 {
			t.Fatalf("docs/rest-api.md:%d: $ %s\n%s", c.line, c.cmd, r)
		}
		got := r.stdout
		if name != "" {
			vars[name] = strings.TrimSpace(r.stdout)
			got = r.stderr // the secret is the variable's; the terminal shows stderr
		}
		if want := docSameRun(strings.Join(c.out, "\n")); docSameRun(strings.TrimSuffix(got, "\n")) != want {
			t.Errorf("docs/rest-api.md:%d: $ %s\nthe page prints:\n%s\nthe binary printed:\n%s", c.line, c.cmd, strings.Join(c.out, "\n"), got)
		}
	}
	// What the first key's notice says: the server started without keys
	// still answers without one.
	if code, body := s.do("GET", "/v1/tools", ""); code != 200 {
		t.Errorf("a server started without keys, keys made since: GET /v1/tools without a key = %d %s; want 200, as the notice says", code, body)
	}
	if code, took := s.stop(syscall.SIGINT, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("Ctrl-C: exit %d after %v; want 0 within 5 s\n%s", code, took, s.stderr)
	}

	s = u.serve("--config", "wield.yaml")
	ran := 0
	for _, c := range afterBlock {
		if !strings.HasPrefix(c.cmd, "curl ") || strings.Contains(c.cmd, "|") {
			continue // pipes through jq, grep: the plain commands say enough
		}
		_, got := docCurl(t, s, c.cmd, vars)
		ran++
		if want := strings.Join(c.out, "\n"); got != want {
			t.Errorf("docs/rest-api.md:%d: $ %s\nthe page prints:\n%s\nthe server answered:\n%s", c.line, c.cmd, want, got)
		}
	}
	if ran < 4 {
		t.Errorf("ran %d of the page's curl commands after the restart; want at least 4", ran)
	}
	if code, took := s.stop(syscall.SIGINT, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("Ctrl-C: exit %d after %v; want 0 within 5 s\n%s", code, took, s.stderr)
	}
}

// TestJourneyDocsDeferredRefusal: docs/call-formats.md says deferred
// loading is refused (exit 2, 400) for a format whose provider has no tool
// search, and namespaces for Anthropic. The refusal names the format asked
// and the formats to use instead, each of which `wield list --format`
// then takes (it named openai-responses, a dialect's name, under an "llm:"
// prefix); over REST the 400 says the same.
func TestJourneyDocsDeferredRefusal(t *testing.T) {
	u := newUser(t)
	suggested := func(r *run) []string {
		t.Helper()
		_, after, ok := strings.Cut(r.stderr, "use ")
		if !ok {
			t.Fatalf("the refusal suggests no format:\n%s", r)
		}
		var out []string
		for _, f := range regexp.MustCompile(`[a-z][a-z-]+`).FindAllString(after, -1) {
			if f != "or" {
				out = append(out, f)
			}
		}
		return out
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"list", "--format", "openai", "--deferred"}, []string{"anthropic", "anthropic-strict", "responses", "responses-strict"}},
		{[]string{"list", "--format", "anthropic", "--deferred", "--namespaces"}, []string{"responses", "responses-strict"}},
	} {
		r := u.wield(c.args...)
		if r.code != 2 || strings.Contains(r.stderr, "llm:") || strings.Contains(r.stderr, "openai-responses") || !strings.Contains(r.stderr, `"`+c.args[2]+`"`) {
			t.Errorf("want exit 2 naming the format %q and formats a user gives:\n%s", c.args[2], r)
			continue
		}
		got := suggested(r)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v suggests %v, want %v", c.args, got, c.want)
		}
		for _, f := range got {
			args := append([]string{}, c.args...)
			args[2] = f
			if r := u.wield(args...); r.code != 0 {
				t.Errorf("the suggested format %s is refused too:\n%s", f, r)
			}
		}
	}
	s := u.serve()
	code, body := s.do("GET", "/v1/tools?format=openai&deferred=true", "")
	if code != 400 || !strings.Contains(string(body), `format \"openai\" has no deferred loading`) || strings.Contains(string(body), "openai-responses") {
		t.Errorf("GET /v1/tools?format=openai&deferred=true = %d %s; want 400 naming the format and the formats to use", code, body)
	}
	if code, took := s.stop(syscall.SIGINT, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("Ctrl-C: exit %d after %v; want 0 within 5 s\n%s", code, took, s.stderr)
	}
}

// docDataOf returns the -d body of a page's curl command.
func docDataOf(t *testing.T, line string, vars map[string]string) string {
	t.Helper()
	words := shellWords(line, vars)
	for i, w := range words {
		if w == "-d" && i+1 < len(words) {
			return words[i+1]
		}
	}
	t.Fatalf("no -d in %s", line)
	return ""
}

// TestJourneyDocsElicitShutdown: docs/mcp.md's approval by elicitation,
// with the page's own requests (its initialize declaring elicitation, its
// tools/call of the confirm tool restart_service) and its configuration:
// the question reaches the client; Ctrl-C then stops wield serve within
// seconds, and the call's stream ends with a result saying the server shut
// down (it said the MCP client left, which it had not).
func TestJourneyDocsElicitShutdown(t *testing.T) {
	text := docPage(t, "mcp.md")
	u := newUser(t)
	for _, f := range []string{"say.json", "utc_date.yaml", "word_count.yaml", "basics.toolset.yaml", "helper.agent.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "tools", f))
		if err != nil {
			t.Fatal(err)
		}
		u.write(filepath.Join("tools", f), string(b))
	}
	u.write("tools/restart_service.yaml", `name: restart_service
description: Restart a service
permission: confirm
parameters:
  - {name: service, type: string}
entry: {type: command, command: ["echo", "restarted", "{service}"]}
`)
	u.write("README.md", "# Notes\n")
	_, rest, ok := strings.Cut(text, "With this configuration (`examples/tools/` plus a `confirm` tool `restart_service` in `tools/`):")
	if !ok {
		t.Fatal("docs/mcp.md: the streamable HTTP configuration is not where it was")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	config, _, _ := strings.Cut(rest, "```")
	u.write("wield.yaml", config)

	var initialize, call string
	for _, c := range docCommands(text) {
		switch {
		case initialize == "" && strings.Contains(c.cmd, `"method":"initialize"`) && strings.Contains(c.cmd, `"elicitation":{}`):
			initialize = docDataOf(t, c.cmd, nil)
		case strings.Contains(c.cmd, "curl -s -N $H ") && strings.Contains(c.cmd, `"name":"restart_service"`):
			call = docDataOf(t, c.cmd, nil)
		}
	}
	if initialize == "" || call == "" {
		t.Fatalf("docs/mcp.md: the session's initialize (%q) or the elicitation example's call (%q) is not where it was", initialize, call)
	}

	s := u.serve("--config", "wield.yaml")
	post := func(body, session string) *http.Response {
		req, err := http.NewRequest("POST", s.url+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(initialize, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	resp.Body.Close()

	resp = post(call, sid)
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(want string) string {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the call's stream ended before %q", want)
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q on the call's stream within 30 s\n%s", want, s.stderr)
			}
		}
	}
	next(`"method":"elicitation/create"`)
	if code, took := s.stop(syscall.SIGINT, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("Ctrl-C while the question is open: exit %d after %v; want 0 within 5 s\n%s", code, took, s.stderr)
	}
	got := next(`"id":2`)
	if !strings.Contains(got, "the server shut down") || strings.Contains(got, "client left") {
		t.Errorf("the call's answer after Ctrl-C: %s\nwant it to say the server shut down", got)
	}
}

// docYAMLByComment returns the YAML blocks of a page whose first line is a
// comment naming their file ("# tools/research.yaml"), by that name; a
// name given twice keeps its first block.
func docYAMLByComment(text string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(text, "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		first, _, _ := strings.Cut(block, "\n")
		name, ok := strings.CutPrefix(first, "# ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		if _, seen := out[name]; !seen || name != "wield.yaml" {
			out[name] = block
		}
	}
	return out
}

// TestJourneyDocsResearchAgents: docs/toolsets-and-agents.md's research
// agents and their wield.yaml, copied whole from the page (the comment
// naming the file included): without BRAVE_KEY, `wield validate` exits 1
// with the error the page quotes, at the line and column it gives (it gave
// the line of the file without its comment); with the key, the page's
// commands print what it prints.
func TestJourneyDocsResearchAgents(t *testing.T) {
	text := docPage(t, "toolsets-and-agents.md")
	u := newUser(t)
	blocks := docYAMLByComment(text)
	agents, ok := blocks["tools/research.yaml"]
	if !ok {
		t.Fatal("docs/toolsets-and-agents.md: no block \"# tools/research.yaml\"")
	}
	u.write("tools/research.yaml", agents)
	var config string
	for _, part := range strings.Split(text, "```yaml\n# wield.yaml\n")[1:] {
		if block, _, _ := strings.Cut(part, "```"); strings.Contains(block, "web_search:") {
			config = "# wield.yaml\n" + block
		}
	}
	if config == "" {
		t.Fatal("docs/toolsets-and-agents.md: no wield.yaml with web_search")
	}
	u.write("wield.yaml", config)

	quoted := regexp.MustCompile("(?s)refuse the agents\\s+that name it \\(exit 1\\): `([^`]+)`").FindStringSubmatch(text)
	if quoted == nil {
		t.Fatal("docs/toolsets-and-agents.md: the quoted error of web_search off is not where it was")
	}
	want := strings.Join(strings.Fields(quoted[1]), " ")
	r := u.wield("validate", "--config", "wield.yaml", "tools")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, want+"\n") {
		t.Errorf("without BRAVE_KEY: want exit 1 and the page's line\n%s\n%s", want, r)
	}

	from := strings.Count(text[:strings.Index(text, "# tools/research.yaml")], "\n") + 1
	ran := 0
	for _, c := range docCommands(text) {
		if c.line < from {
			continue
		}
		if v, ok := strings.CutPrefix(c.cmd, "export BRAVE_KEY="); ok {
			u.setenv("BRAVE_KEY", v)
			continue
		}
		rest, ok := strings.CutPrefix(c.cmd, "wield ")
		if !ok || strings.Contains(c.cmd, "|") || strings.Contains(c.cmd, "--model") {
			continue
		}
		if !strings.Contains(rest, "--config wield.yaml") {
			continue
		}
		r := u.wield(shellWords(rest, nil)...)
		ran++
		if got, want := strings.TrimSuffix(r.stdout, "\n"), strings.Join(c.out, "\n"); r.code != 0 || got != want {
			t.Errorf("docs/toolsets-and-agents.md:%d: $ %s\nthe page prints:\n%s\nthe binary printed:\n%s", c.line, c.cmd, want, r)
		}
		if ran == 2 {
			break
		}
	}
	if ran != 2 {
		t.Errorf("ran %d of the page's commands with BRAVE_KEY set; want its validate and list", ran)
	}
}
