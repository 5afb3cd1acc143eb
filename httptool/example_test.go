package httptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield/httptool"
)

func ExampleNew() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"name":"Ann"}`, r.PathValue("id"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	input := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"id": {Type: "string"},
	}}
	// The test server listens on 127.0.0.1, which the guard refuses unless
	// it is allowed.
	guard := &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	tool, err := httptool.New("get_user", "Look up a user", input,
		httptool.Spec{URL: srv.URL + "/users/{id}"}, guard)
	if err != nil {
		panic(err)
	}
	out, err := tool.Handler.Handle(context.Background(), json.RawMessage(`{"id":"u1"}`))
	if err != nil {
		panic(err)
	}
	var o httptool.Output
	json.Unmarshal(out, &o)
	fmt.Println(o.StatusCode, string(o.Body))
	// Output: 200 {"id":"u1","name":"Ann"}
}

func ExampleGuard_Check() {
	var g httptool.Guard // the zero value refuses internal addresses
	fmt.Println(g.Check(netip.MustParseAddr("::ffff:169.254.169.254")))
	fmt.Println(g.Check(netip.MustParseAddr("8.8.8.8")))
	// Output:
	// Access denied: ::ffff:169.254.169.254 is a cloud metadata address (requests to internal addresses are blocked; allow it in the configuration)
	// <nil>
}
