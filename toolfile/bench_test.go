package toolfile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/wieldhq/wield"
)

// BenchmarkLoad1000 loads 1,000 tool files and registers them, ready to call
// (issue 4 asks for under 150 ms).
func BenchmarkLoad1000(b *testing.B) {
	dir := b.TempDir()
	src, err := os.ReadFile("testdata/http_request.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		body := append([]byte(fmt.Sprintf("name: tool_%04d\n", i)), src[len("# tools/http_request.yaml\nname: http_request\n"):]...)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%04d.yaml", i)), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	for b.Loop() {
		var l Loader
		set, err := l.LoadDirs(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(set.Tools) != 1000 {
			b.Fatalf("%d tools", len(set.Tools))
		}
		if err := set.Apply(wield.NewRegistry(&wield.RegistryOptions{Logger: log})); err != nil {
			b.Fatal(err)
		}
	}
}
