package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCloseEndsListeners: a listener opened by Decisions and never stopped
// by its caller (its context never ends) does not keep Close waiting: Close
// ends it, its channel closes, and Close returns at once.
func TestCloseEndsListeners(t *testing.T) {
	NeedServer(t)
	s, err := Open(context.Background(), ServerDSN(), &Options{Schema: FreshSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Decisions(context.Background()) // a caller that forgets
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits 10 s later for a listener its caller never stopped")
	}
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("the listener delivered a decision instead of ending")
		}
	case <-time.After(5 * time.Second):
		t.Error("the listener's channel is still open after Close")
	}
	if _, err := s.Decisions(context.Background()); err == nil {
		t.Error("Decisions after Close: no error")
	}
}

// TestCloseBounded: a connection held elsewhere (a query that never
// returns) keeps Close waiting only until ctx ends; Close then says why.
func TestCloseBounded(t *testing.T) {
	NeedServer(t)
	s, err := Open(context.Background(), ServerDSN(), &Options{Schema: FreshSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Close(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Close took %v with a 200 ms context", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want an error wrapping context.DeadlineExceeded", err)
	}
}
