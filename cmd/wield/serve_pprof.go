package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// servePprof serves Go's runtime profiles (CPU, heap, goroutines, …, the
// handlers of net/http/pprof) on addr until ctx ends, so that an operator
// can see where a running server spends its time and memory without a
// build of their own:
//
//	wield serve --pprof 127.0.0.1:6060
//	go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=10
//
// Only a loopback address is accepted: profiles show the server's code,
// its goroutines' stacks and the arguments on them, and a CPU profile
// costs the server while it runs, so they are for whoever is on the
// machine. The profiles get their own listener, never the API's, so that
// no API key or proxy in front of the API lets them out. It returns once
// the listener is bound, with the bound address; errors name the flag.
func servePprof(ctx context.Context, addr string, log *slog.Logger) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usagef("--pprof %q: %v", addr, err)
	}
	if !loopbackName(host) {
		return "", usagef("--pprof %q: profiles are served on a loopback address only, like 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--pprof: listen on %s: %w", addr, err)
	}
	// The heap profile samples allocations from now on if nothing asked
	// for it at start (see package memprofile; 512 KiB is Go's default).
	if runtime.MemProfileRate == 0 {
		runtime.MemProfileRate = 512 * 1024
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof: serve", "err", err)
		}
	}()
	bound := ln.Addr().String()
	log.Info("serving Go profiles", "addr", "http://"+bound+"/debug/pprof/")
	return bound, nil
}
