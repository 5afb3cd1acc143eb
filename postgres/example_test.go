package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/postgres"
)

// Open a store, record the calls of an engine in it, and read them back.
// (No output is checked: the example needs a PostgreSQL server.)
func ExampleOpen() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/wield_test?sslmode=disable", &postgres.Options{Schema: "example"})
	if err != nil {
		log.Fatal(err) // e.g. "postgres: open: cannot connect to 127.0.0.1:5432: connect: connection refused (...)"
	}
	defer s.Close(ctx)

	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Echo())
	e := engine.New(reg, &engine.Options{Store: s})
	defer e.Close(ctx)
	// In sync mode (the default) the record is committed when Call returns.
	if _, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`),
		Caller: wield.ForConversation("agent", "conv-1")}); err != nil {
		log.Fatal(err)
	}
	page, err := s.Calls(ctx, wield.CallQuery{ConversationID: "conv-1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range page.Records {
		fmt.Println(r.Call.Tool, r.Result.OK, string(r.Output()))
	}
	sum, _ := s.Summary(ctx, "conv-1")
	fmt.Printf("%d calls, %.0f%% ok\n", sum.TotalCalls, sum.SuccessRate)
}
