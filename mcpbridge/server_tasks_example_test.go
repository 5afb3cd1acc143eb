package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

type exportIn struct {
	Table string `json:"table" description:"The table to export"`
}

// A tool whose calls are tasks: a 2026-07-28 client that declares the
// Tasks extension gets a task at once, kept in the record store; a server
// that stops gives its tasks a grace period (DrainTasks), then records
// those left as canceled, saying why.
func ExampleServer_DrainTasks() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tasks")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "wield.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close(ctx)

	running := make(chan struct{})
	export := wield.Func("export", "Export a table (slow)", func(ctx context.Context, in exportIn) (string, error) {
		close(running)
		<-ctx.Done() // a long job, cut short here
		return "", ctx.Err()
	})
	export.Task = wield.TaskRequired // as `task: required` in a tool file
	reg := wield.NewRegistry(nil)
	reg.MustRegister(export)
	eng := engine.New(reg, &engine.Options{Store: store})
	defer eng.Close(ctx)
	srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Calls: store})
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"export","arguments":{"table":"orders"},
		"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcpbridge.TasksExtension + `":{}}}}}}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "export"} {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, r)
	var answer struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
			Status     string `json:"status"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Result.ResultType, answer.Result.Status)

	<-running // the task's call has started (a drain sooner finds it waiting for capacity)
	grace, over := context.WithCancelCause(ctx)
	over(&wield.Error{Type: wield.ErrCanceled, Message: "the server shut down"}) // no grace left
	srv.DrainTasks(grace)
	rec, err := store.Call(ctx, answer.Result.TaskID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Result.ErrorType, "-", rec.Result.Error)
	// Output:
	// task working
	// canceled - the call was canceled before the tool finished: the server shut down
}
