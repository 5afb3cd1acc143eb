//go:build unix

package journeys

import (
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyChatFailedLinesExit1: a chat whose model cannot be reached
// answers no line; a script piping lines in gets exit 1 and stderr names
// the lines that got no answer.
func TestJourneyChatFailedLinesExit1(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	u := newUser(t)
	r := u.wieldIn("first\nsecond\n", "chat", "--model", "http://"+refused+"/v1/gone")
	if r.code != 1 {
		t.Fatalf("want exit 1 when no line got an answer:\n%s", r)
	}
	if !strings.Contains(r.stderr, "line 1:") || !strings.Contains(r.stderr, "line 2:") || !strings.Contains(r.stderr, "no answer to line 1, 2") {
		t.Errorf("stderr does not say which lines failed:\n%s", r)
	}

	// A model that answers the first line and errors on the second: exit 1,
	// the second line named, the first answer printed.
	model, _ := newFakeModel(t, "",
		reply(completion("Hello.")),
		reply(map[string]any{"error": map[string]any{"message": "model overloaded", "type": "server_error"}}),
	)
	r = u.wieldIn("hi\nagain\n", "chat", "--model", model.srv.URL+"/v1/m")
	if r.code != 1 || !strings.Contains(r.stdout, "Hello.") || !strings.Contains(r.stderr, "no answer to line 2") || strings.Contains(r.stderr, "line 1:") {
		t.Errorf("want the first answer, exit 1 and line 2 named:\n%s", r)
	}
}

// TestJourneyChatTraceOnce: two lines, each making a call: each call shows
// once on stderr (→ as it starts, ← with its outcome), natively and in the
// prompt mode, where the calls are written in the model's text.
func TestJourneyChatTraceOnce(t *testing.T) {
	xml := func(msg string) string {
		return "<tool_call>\n  <name>echo</name>\n  <params>\n    <message><![CDATA[" + msg + "]]></message>\n  </params>\n</tool_call>"
	}
	for _, prompt := range []bool{false, true} {
		name := "native"
		call := func(msg string) any { return completion("", [2]string{"echo", `{"message":"` + msg + `"}`}) }
		args := []string{}
		if prompt {
			name = "prompt"
			call = func(msg string) any { return completion(xml(msg)) }
			args = append(args, "--no-function-calling")
		}
		t.Run(name, func(t *testing.T) {
			model, _ := newFakeModel(t, "",
				reply(call("one")), reply(completion("Said one.")),
				reply(call("two")), reply(completion("Said two.")),
			)
			u := newUser(t)
			r := u.wieldIn("say one\nsay two\n", append([]string{"chat", "--model", model.srv.URL + "/v1/m"}, args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "Said one.\nSaid two.") {
				t.Fatalf("want both answers and exit 0:\n%s", r)
			}
			for _, line := range []string{`→ echo {"message":"one"}`, `→ echo {"message":"two"}`, "← echo ok"} {
				want := 1
				if line == "← echo ok" {
					want = 2
				}
				if got := strings.Count(r.stderr, line); got != want {
					t.Errorf("%q shows %d times on stderr, want %d:\n%s", line, got, want, r.stderr)
				}
			}
		})
	}
}

// TestJourneyChatFailureWording: what a model reads of its failed calls in
// a chat: a tool outside its agent's toolkit and a tool that does not exist
// read the same (nothing about tools beyond its own), in the toolkit's
// words; a validation error names each problem once.
func TestJourneyChatFailureWording(t *testing.T) {
	model, _ := newFakeModel(t, "",
		reply(completion("",
			[2]string{"calculator", `{"expression":"1+1"}`},
			[2]string{"no_such_tool", `{}`},
			[2]string{"echo", `{"mesage":"typo"}`},
		)),
		reply(completion("Done.")),
	)
	u := newUser(t)
	u.write("agents/helper.yaml", "kind: agent\nname: helper\ntools: [echo]\n")
	r := u.wieldIn("try\n", "chat", "--model", model.srv.URL+"/v1/m", "--agent", "agents/helper.yaml")
	if r.code != 0 {
		t.Fatalf("want exit 0 (failed calls are the model's to handle):\n%s", r)
	}
	reqs := model.requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	got := map[string]string{}
	for i, m := range reqs[1].Messages {
		if m.Role == "tool" {
			got[m.ToolCallID] = reqs[1].text(i)
		}
	}
	if got["call_a"] != "Tool 'calculator' not available in helper's toolkit" || got["call_b"] != "Tool 'no_such_tool' not available in helper's toolkit" {
		t.Errorf("a tool outside the toolkit and an unknown tool read:\n%q\n%q", got["call_a"], got["call_b"])
	}
	v := got["call_c"]
	if !strings.HasPrefix(v, "Error: ") || strings.Count(v, "unknown property") != 1 || strings.Count(v, "missing required property") != 1 {
		t.Errorf("the validation error does not name each problem once:\n%s", v)
	}
}

// TestJourneyListSaysWhatIsOff: `wield list` says on stderr which built-in
// tools are off and the setting that turns each group on, in at most three
// lines, while stdout stays the table; with the settings made, the lines
// about them go.
func TestJourneyListSaysWhatIsOff(t *testing.T) {
	u := newUser(t)
	r := u.must("list")
	for _, want := range []string{
		"off: read_file, write_file, list_files, delete_file, move_file, get_file_info (set allowed_paths in wield.yaml)",
		"web_search (set web_search", "call_subagent (load a tool file of kind: agent", "run_program (pass --programs, or set programs: {enabled: true} in wield.yaml)",
		"refuse every variable: get_env, set_env (set env_allow in wield.yaml)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; n > 3 {
		t.Errorf("%d lines on stderr, want at most 3:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stdout, "off:") || !strings.HasPrefix(r.stdout, "NAME") {
		t.Errorf("stdout is not the table alone:\n%s", r.stdout)
	}
	u.write("wield.yaml", "allowed_paths: [.]\nenv_allow: [HOME]\n")
	r = u.must("--config", "wield.yaml", "list")
	if strings.Contains(r.stderr, "read_file") || strings.Contains(r.stderr, "env_allow") || !strings.Contains(r.stderr, "web_search") {
		t.Errorf("with allowed_paths and env_allow set, stderr still names them, or no longer web_search:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "read_file") {
		t.Errorf("the file tools are not listed once allowed_paths is set:\n%s", r.stdout)
	}
	// The file enables programs and the flag turns them off: the flag is
	// named, not the setting the file already has.
	u.write("wield.yaml", "programs: {enabled: true}\n")
	r = u.must("--config", "wield.yaml", "list", "--programs=off")
	if !strings.Contains(r.stderr, "run_program (--programs=off turns it off)") || strings.Contains(r.stdout, "run_program") {
		t.Errorf("list --programs=off with programs enabled in wield.yaml: want run_program unlisted and the flag named on stderr:\n%s", r)
	}
}

// confirmUser is a user whose set_env (a confirm tool) may set JOURNEY_X.
func confirmUser(t *testing.T) *user {
	u := newUser(t)
	u.write("wield.yaml", "env_allow: [JOURNEY_X]\n")
	return u
}

// onTerminal runs wield under a pseudo-terminal (util-linux script), typing
// answer once the question is asked (none when answer is ""); it returns
// what the terminal showed and the exit code.
func (u *user) onTerminal(answer string, args ...string) (string, int) {
	u.t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		u.t.Skip("script (util-linux) is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	line := bin
	for _, a := range args {
		line += " '" + a + "'"
	}
	cmd := exec.CommandContext(ctx, "script", "-qec", line, "/dev/null")
	cmd.Dir, cmd.Env = u.dir, u.env
	in, err := cmd.StdinPipe()
	if err != nil {
		u.t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	if answer != "" {
		if !eventually(20*time.Second, func() bool { return strings.Contains(out.String(), "[y/N]") }) {
			u.t.Errorf("no question on the terminal:\n%s", out)
		}
		in.Write([]byte(answer + "\n"))
	}
	err = cmd.Wait()
	in.Close()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("script: %v", err)
	}
	return strings.ReplaceAll(out.String(), "\r", ""), code
}

// TestJourneyCallConfirmOnTerminal: `wield call` of a confirm tool on a
// terminal asks (the tool, its arguments, [y/N]): y runs it, n is
// approval_denied; the decision is recorded as given by the local user.
func TestJourneyCallConfirmOnTerminal(t *testing.T) {
	u := confirmUser(t)
	shown, code := u.onTerminal("y", "--config", "wield.yaml", "call", "set_env", "key=JOURNEY_X", "value=1", "--timeout", "30s")
	if code != 0 || !regexp.MustCompile(`approval \w+: set_env \{"key":"JOURNEY_X","value":"1"\}\nrun it\? \[y/N\]`).MatchString(shown) || !strings.Contains(shown, `"ok": true`) {
		t.Fatalf("answer y: want the question, then the call run and exit 0 (exit %d):\n%s", code, shown)
	}
	shown, code = u.onTerminal("n", "--config", "wield.yaml", "call", "set_env", "key=JOURNEY_X", "value=2", "--timeout", "30s")
	if code != 1 || !strings.Contains(shown, `"error_type": "approval_denied"`) {
		t.Fatalf("answer n: want approval_denied and exit 1 (exit %d):\n%s", code, shown)
	}
	r := u.must("--config", "wield.yaml", "approvals", "list", "--status", "all")
	if !strings.Contains(r.stdout, "approved") || !strings.Contains(r.stdout, "denied") {
		t.Errorf("the terminal's answers are not recorded as decisions:\n%s", r)
	}
}

// TestJourneyCallConfirmElsewhere: without a terminal, `wield call` of a
// confirm tool says on stderr, while it waits, which approval is pending
// and the command that gives it; a second process approving it makes the
// first finish.
func TestJourneyCallConfirmElsewhere(t *testing.T) {
	u := confirmUser(t)
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", "wield.yaml", "call", "set_env", "key=JOURNEY_X", "value=1", "--timeout", "30s")
	cmd.Dir, cmd.Env = u.dir, u.env
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	approve := regexp.MustCompile(`approve: (wield .* approvals approve (\w+))\n`)
	if !eventually(20*time.Second, func() bool { return approve.MatchString(stderr.String()) }) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no pending approval and how to approve it on stderr:\n%s", stderr)
	}
	m := approve.FindStringSubmatch(stderr.String())
	if !strings.Contains(stderr.String(), "approval "+m[2]+" pending: set_env") || !strings.Contains(m[1], "--config wield.yaml") {
		t.Errorf("the notice does not name the approval and the tool, or its command lacks --config:\n%s", stderr)
	}
	u.must(strings.Fields(m[1])[1:]...)
	start := time.Now()
	err := cmd.Wait()
	if err != nil || !strings.Contains(stdout.String(), `"ok": true`) {
		t.Fatalf("approved elsewhere: want the call run and exit 0 (%v):\n%s\n%s", err, stdout, stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call finished %v after the approval", took)
	}
}

// TestJourneyCallConfirmBesideServe: `wield call` of a confirm tool with a
// `wield serve` on the same store, approved from a third terminal: the
// tool runs once. The call claims the decision before it runs, as the
// server does when it takes an approval up; `wield call` used not to, so
// the server, hearing of the decision, ran the approved call a second
// time. Ctrl-C while the call waits leaves the approval pending and says
// so; approved then, the server runs the call, once.
func TestJourneyCallConfirmBesideServe(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", `name: mark
description: Append a line to the file marks
permission: confirm
parameters:
  - name: word
    type: string
entry:
  type: command
  command: ["sh", "-c", "echo run >> `+u.path("marks")+`"]
`)
	s := u.serve("--tools", "tools")
	marks := func() int {
		b, _ := os.ReadFile(u.path("marks"))
		return strings.Count(string(b), "run\n")
	}
	approve := regexp.MustCompile(`approve: (wield .* approvals approve (\w+))\n`)
	start := func() (*exec.Cmd, *lockedBuffer, *lockedBuffer, []string) {
		cmd := exec.Command(bin, "call", "mark", "word=a", "--tools", "tools", "--timeout", "30s")
		cmd.Dir, cmd.Env = u.dir, u.env
		stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		if !eventually(20*time.Second, func() bool { return approve.MatchString(stderr.String()) }) {
			t.Fatalf("no pending approval on stderr:\n%s", stderr)
		}
		return cmd, stdout, stderr, approve.FindStringSubmatch(stderr.String())
	}

	cmd, stdout, stderr, m := start()
	u.must(strings.Fields(m[1])[1:]...)
	if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), `"ok": true`) {
		t.Fatalf("approved: want the call run and exit 0 (%v):\n%s\n%s", err, stdout, stderr)
	}
	time.Sleep(2 * time.Second) // the server hears of a decision within a second
	if n := marks(); n != 1 {
		t.Fatalf("the approved call ran %d times, want once:\n%s", n, s.stderr)
	}

	cmd, stdout, stderr, m = start()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stdout.String(), "stays pending") {
		t.Fatalf("Ctrl-C while waiting: want exit 1 and the approval said to stay pending (%v):\n%s\n%s", err, stdout, stderr)
	}
	if r := u.must("approvals", "list"); !strings.Contains(r.stdout, m[2]) {
		t.Fatalf("the approval is not pending after Ctrl-C:\n%s", r)
	}
	u.must(strings.Fields(m[1])[1:]...)
	if !eventually(10*time.Second, func() bool { return marks() == 2 }) {
		t.Fatalf("the server did not run the call approved after its caller left (%d runs):\n%s", marks(), s.stderr)
	}
	time.Sleep(time.Second)
	if n := marks(); n != 2 {
		t.Fatalf("%d runs, want 2 (one per approval):\n%s", n, s.stderr)
	}
	if r := u.must("calls", "--tool", "mark", "--json"); strings.Count(r.stdout, `"ok": true`) != 2 {
		t.Errorf("want two successful records of mark:\n%s", r)
	}
	if code, took := s.stop(syscall.SIGTERM, 5*time.Second); code != 0 || took > 2*time.Second {
		t.Errorf("serve: exit %d after %v, want 0 within 2 s", code, took)
	}
}
