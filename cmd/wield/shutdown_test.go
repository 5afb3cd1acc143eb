//go:build unix

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCloseUnusedOnShutdown: a connection on which no request came does
// not hold Shutdown (net/http alone waits 5 s for it).
func TestCloseUnusedOnShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.NotFoundHandler()}
	closeUnusedOnShutdown(hs)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server has the connection once it answers a request on another.
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if err := hs.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v after %v, want nil at once", err, time.Since(start))
	}
	<-served
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection is still open")
	}
}

// TestGracePeriod: the grace period ends when it is over, or at a second
// signal, and its cause says which.
func TestGracePeriod(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Run("over", func(t *testing.T) {
		grace, hurried, release := gracePeriod(50*time.Millisecond, log)
		defer release()
		select {
		case <-grace.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the grace period did not end")
		}
		if got := context.Cause(grace).Error(); got != "the server shut down: its grace period of 50ms ended" {
			t.Errorf("cause %q", got)
		}
		if hurried() {
			t.Error("hurried without a second signal")
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			grace, hurried, release := gracePeriod(time.Hour, log)
			defer release()
			if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-grace.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("a second signal did not end the grace period")
			}
			want := map[syscall.Signal]string{syscall.SIGTERM: "a second SIGTERM", syscall.SIGINT: "a second interrupt (Ctrl-C)"}[sig]
			if got := context.Cause(grace).Error(); !strings.HasSuffix(got, want) {
				t.Errorf("cause %q, want it to end with %q", got, want)
			}
			if !hurried() {
				t.Error("hurried() = false after a second signal")
			}
		})
	}
}
