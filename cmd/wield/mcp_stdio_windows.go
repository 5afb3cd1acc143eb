package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// stdioProtocol keeps stdout for the protocol alone: when out is the
// process's stdout, the protocol keeps that handle, and everything else
// that writes to stdout is pointed at stderr: os.Stdout (so fmt.Println
// and the libraries that print), and the process's standard output handle
// (SetStdHandle, so C code and child processes that inherit it). A tool or
// a library that prints then writes to stderr instead of corrupting the
// JSON-RPC stream.
//
// Windows has no dup2 to redirect a handle in place, so a writer that took
// os.Stdout before this call still reaches the protocol; wield's loggers
// write to stderr.
func stdioProtocol(out io.Writer) (io.Writer, func(), error) {
	f, ok := out.(*os.File)
	if !ok || f != os.Stdout {
		return out, func() {}, nil
	}
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, windows.Handle(os.Stderr.Fd())); err != nil {
		return nil, nil, fmt.Errorf("mcp: point stdout at stderr: %w", err)
	}
	os.Stdout = os.Stderr
	return f, func() { f.Close() }, nil
}
