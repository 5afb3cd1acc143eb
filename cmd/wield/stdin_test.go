package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStdinInterrupted: Ctrl-C or SIGTERM (the command's context ending)
// while `wield parse` or `wield chat` waits for input on stdin ends the
// command at once; both waited for input that never came. parse says it
// was interrupted (exit 1, nothing parsed), chat ends as at the end of its
// input (exit 0).
func TestStdinInterrupted(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"parse"}, 1, "wield: parse: read stdin: interrupted while waiting for input on stdin"},
		{[]string{"chat", "--model", "http://127.0.0.1:1/v1/m"}, 0, "conversation chat_"},
	} {
		pr, pw := io.Pipe() // stdin open, nothing written: a terminal nobody types on
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		var out, errb bytes.Buffer
		go func() { done <- Run(ctx, c.args, pr, &out, &errb) }()
		time.Sleep(300 * time.Millisecond)
		cancel()
		select {
		case code := <-done:
			if code != c.code || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("%v interrupted: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.stderr)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%v still waits for stdin 5 s after its context ended", c.args)
		}
		pw.Close()
	}
}

// TestInterruptibleReadsAsAsked: the wrapper gives what stdin holds, in
// reads as small as the caller's, and its end, as the reader itself does.
func TestInterruptibleReadsAsAsked(t *testing.T) {
	r := interruptible(context.Background(), strings.NewReader("hello, world"))
	var got []byte
	p := make([]byte, 5)
	for {
		n, err := r.Read(p)
		got = append(got, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "hello, world" {
		t.Errorf("read %q", got)
	}
}

// TestMCPStdioStopQuiet: Ctrl-C or SIGTERM to `wield mcp` over stdio ends
// it with exit 0 and no ERROR line on stderr; the go-sdk logged "server run
// cancelled" at ERROR for the command's own shutdown.
func TestMCPStdioStopQuiet(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() { done <- Run(ctx, []string{"mcp"}, pr, &out, &errb) }()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 0 || strings.Contains(errb.String(), "ERROR") {
			t.Errorf("wield mcp stopped: exit %d, stderr %q; want 0 and no ERROR", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Error("wield mcp still runs 5 s after its context ended")
	}
}
