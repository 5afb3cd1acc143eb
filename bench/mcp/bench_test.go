package mcpbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server process is this test binary run with MCPBENCH_SERVE=kind,n,stateless:
// it serves /mcp and /rusage on 127.0.0.1 and prints its address, until its
// stdin closes.
func TestMain(m *testing.M) {
	if spec := os.Getenv("MCPBENCH_SERVE"); spec != "" {
		if err := Serve(spec); err != nil {
			fmt.Fprintln(os.Stderr, "mcpbench serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// server is a running server process.
type server struct {
	base string
	cmd  *exec.Cmd
	in   io.WriteCloser
}

func start(b *testing.B, kind string, tools int, stateless bool) *server {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("MCPBENCH_SERVE=%s,%d,%v", kind, tools, stateless))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("server %s: %v", kind, err)
	}
	s := &server{base: "http://" + strings.TrimSpace(line), cmd: cmd, in: in}
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return s
}

// cpu is the server's CPU time so far.
func (s *server) cpu(b *testing.B) time.Duration {
	resp, err := http.Get(s.base + "/rusage")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	us, err := strconv.ParseInt(strings.TrimSpace(string(body)), 10, 64)
	if err != nil {
		b.Fatalf("rusage %q: %v", body, err)
	}
	return time.Duration(us) * time.Microsecond
}

func connect(b *testing.B, s *server) *mcp.ClientSession {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// measure runs b.N operations over clients goroutines and reports the
// server's CPU per operation and the operations per second.
func measure(b *testing.B, s *server, clients int, op func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	before := s.cpu(b)
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := op(c); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	cpu := s.cpu(b) - before
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/op")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

func BenchmarkCall(b *testing.B) {
	for _, kind := range []string{KindSDK, KindMCPGo, KindWieldSDK, KindWield} {
		for _, stateless := range []bool{false, true} {
			for _, clients := range []int{1, 8, 64} {
				mode := "stateful"
				if stateless {
					mode = "stateless"
				}
				b.Run(fmt.Sprintf("%s/%s/clients=%d", kind, mode, clients), func(b *testing.B) {
					s := start(b, kind, 1, stateless)
					sessions := make([]*mcp.ClientSession, clients)
					for i := range sessions {
						sessions[i] = connect(b, s)
					}
					ctx := context.Background()
					measure(b, s, clients, func(i int) error {
						res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
						if err != nil {
							return err
						}
						if res.IsError {
							return fmt.Errorf("echo failed: %v", res.Content)
						}
						return nil
					})
				})
			}
		}
	}
}

func BenchmarkList1000(b *testing.B) {
	for _, kind := range []string{KindPlain, KindSDK, KindMCPGo, KindWieldSDK, KindWield} {
		b.Run(kind, func(b *testing.B) {
			s := start(b, kind, 1000, false)
			ctx := context.Background()
			var op func(int) error
			if kind == KindPlain {
				body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				op = func(int) error {
					resp, err := http.Post(s.base+"/mcp", "application/json", bytes.NewReader(body))
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					n, err := io.Copy(io.Discard, resp.Body)
					if err == nil && (resp.StatusCode != 200 || n < 100000) {
						err = fmt.Errorf("tools/list: status %d, %d bytes", resp.StatusCode, n)
					}
					return err
				}
			} else {
				cs := connect(b, s)
				op = func(int) error {
					res, err := cs.ListTools(ctx, nil)
					if err == nil && len(res.Tools) != 1000 {
						err = fmt.Errorf("tools/list: %d tools", len(res.Tools))
					}
					return err
				}
			}
			measure(b, s, 1, op)
		})
	}
}
