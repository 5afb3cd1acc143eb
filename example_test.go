package wield_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/wieldhq/wield"
)

type greetIn struct {
	Name  string `json:"name" description:"Who to greet" minLength:"1"`
	Shout bool   `json:"shout,omitempty" description:"Greet in capitals"`
}

func greet(_ context.Context, in greetIn) (string, error) {
	s := "Hello, " + in.Name + "!"
	if in.Shout {
		s = strings.ToUpper(s)
	}
	return s, nil
}

// Func infers the input schema from the argument struct and its tags; the
// handler decodes the arguments into it. The engine (package engine) validates
// the arguments against the schema before the handler runs.
func ExampleFunc() {
	t := wield.Func("greet", "Greet someone by name", greet)

	schema, _ := json.Marshal(t.InputSchema)
	fmt.Println(string(schema))

	out, err := t.Handler.Handle(context.Background(), json.RawMessage(`{"name":"Ada","shout":true}`))
	fmt.Println(string(out), err)
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"Who to greet","minLength":1},"shout":{"type":"boolean","description":"Greet in capitals"}},"required":["name"],"additionalProperties":false}
	// "HELLO, ADA!" <nil>
}

// A Registry holds every tool once: the first registration of a name wins and
// a later one is kept as shadowed, with a warning and an error wrapping
// ErrDuplicate.
func ExampleRegistry() {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})

	search := wield.Func("search", "Search the web", greet)
	search.Category, search.Tags = wield.CategoryNetwork, []string{"web"}
	fetch := wield.Func("fetch", "Fetch a page", greet)
	fetch.Category, fetch.Tags = wield.CategoryHTTP, []string{"web", "read"}
	calc := wield.Func("calc", "Evaluate an expression", greet)
	calc.Category = wield.CategoryCode
	reg.MustRegister(search, fetch, calc)

	for _, t := range reg.List(wield.Query{Tags: []string{"web"}}) {
		fmt.Println(t.Name, t.Category)
	}

	again := wield.Func("search", "Another search", greet)
	again.Source = "tools/search.yaml"
	err := reg.Register(again)
	fmt.Println(errors.Is(err, wield.ErrDuplicate), len(reg.Shadowed()["search"]), reg.Len())
	// Output:
	// search network
	// fetch http
	// true 1 3
}

// A Toolkit is one agent's view of the registry, built from tool names and
// toolsets; a call outside it is answered with seed 000's message.
func ExampleRegistry_CreateToolkit() {
	reg := wield.NewRegistry(nil)
	for _, name := range []string{"web_search", "web_fetch", "read_artifact", "update_artifact"} {
		reg.MustRegister(wield.Func(name, name, greet))
	}
	if err := reg.DefineToolset(wield.Toolset{Name: "artifacts", Tools: []string{"read_artifact", "update_artifact"}}); err != nil {
		fmt.Println(err)
	}

	kit, err := reg.CreateToolkit("writer", "web_fetch", "toolset:artifacts")
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(kit.Names())
	fmt.Println(kit.Has("web_search"), kit.NotAvailable("web_search"))

	_, err = reg.CreateToolkit("crawler", "web_fetch", "browser")
	fmt.Println(err)
	// Output:
	// [web_fetch read_artifact update_artifact]
	// false Tool 'web_search' not available in writer's toolkit
	// create toolkit for "crawler": wield: not found: browser
}

// A Bus keeps the newest events in a ring; a subscriber reads at its own pace
// and can resume after the last event it saw.
func ExampleBus() {
	bus := wield.NewBus(64)
	failures := bus.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventExecutionFailed })
	defer failures.Close()

	bus.Publish(wield.Event{Type: wield.EventExecutionStarted, Tool: "fetch"})
	bus.Publish(wield.Event{Type: wield.EventExecutionFailed, Tool: "fetch", ErrorType: wield.ErrTimeout})
	bus.Publish(wield.Event{Type: wield.EventExecutionStarted, Tool: "calc"})
	bus.Publish(wield.Event{Type: wield.EventExecutionCompleted, Tool: "calc"})

	ctx := context.Background()
	e, _ := failures.Next(ctx)
	fmt.Println(e.Type, e.Tool, e.ErrorType)

	// A client that saw the failure before it lost its connection resumes
	// after its ID, and gets the two events it missed.
	resumed, exact := bus.SubscribeAfter(e.ID, nil)
	defer resumed.Close()
	fmt.Println("exact:", exact)
	for range 2 {
		e, _ := resumed.Next(ctx)
		fmt.Println(e.Type, e.Tool)
	}
	// Output:
	// execution_failed fetch timeout
	// exact: true
	// execution_started calc
	// execution_completed calc
}
