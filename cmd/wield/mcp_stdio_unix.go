//go:build unix

package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// stdioProtocol keeps stdout for the protocol alone: when out is the
// process's stdout, the protocol gets a duplicate of it, and stdout itself
// (its file descriptor, so C code and child processes too) is pointed at
// stderr. A tool or a library that prints then writes to stderr instead
// of corrupting the JSON-RPC stream.
func stdioProtocol(out io.Writer) (io.Writer, func(), error) {
	f, ok := out.(*os.File)
	if !ok || f != os.Stdout {
		return out, func() {}, nil
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, nil, fmt.Errorf("mcp: keep stdout for the protocol: %w", err)
	}
	proto := os.NewFile(uintptr(fd), "mcp-protocol")
	if err := unix.Dup2(int(os.Stderr.Fd()), int(f.Fd())); err != nil {
		proto.Close()
		return nil, nil, fmt.Errorf("mcp: point stdout at stderr: %w", err)
	}
	return proto, func() { proto.Close() }, nil
}
