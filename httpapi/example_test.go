package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/sqlite"
)

// Serve an engine and call a tool through the Go client.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "wield-example")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "wield.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close(ctx)

	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo())
	eng := engine.New(reg, &engine.Options{Store: store})
	defer eng.Close(ctx)
	srv, err := httpapi.New(httpapi.Options{Engine: eng, Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	c := httpapi.NewClient(hs.URL, "")
	res, err := c.Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"hello"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.OK, string(res.Output))

	// A tool's failure is a result, not an error.
	res, _ = c.Call(ctx, "echo", httpapi.CallRequest{Arguments: json.RawMessage(`{}`)})
	fmt.Println(res.OK, res.ErrorType)

	// An API error has a stable code.
	_, err = c.Tool(ctx, "nope")
	fmt.Println(err)
	// Output:
	// true {"message":"hello"}
	// false validation_error
	// httpapi: not_found: no tool 'nope'
}
