package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

type greetIn struct {
	Name  string `json:"name" description:"Who to greet"`
	Times int    `json:"times,omitempty" default:"1" description:"How many times"`
}

func greet(_ context.Context, in greetIn) (string, error) {
	return strings.TrimSpace(strings.Repeat("Hello, "+in.Name+"! ", in.Times)), nil
}

func ExampleEngine_Call() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("greet", "Greet someone", greet))
	e := engine.New(reg, nil)
	ctx := context.Background()

	// "2" is coerced to the integer the schema asks for.
	res, err := e.Call(ctx, wield.Call{Tool: "greet", Arguments: json.RawMessage(`{"name":"Ada","times":"2"}`)})
	if err != nil {
		fmt.Println("system failure:", err)
		return
	}
	fmt.Println(res.OK, string(res.Output), res.Attempts)

	// A mistake is a result the model can learn from, not a Go error.
	res, _ = e.Call(ctx, wield.Call{Tool: "greet", Arguments: json.RawMessage(`{"Name":"Ada"}`)})
	fmt.Println(res.OK, res.ErrorType)
	for _, v := range res.ValidationErrors {
		fmt.Println("-", v)
	}
	// Output:
	// true "Hello, Ada! Hello, Ada!" 1
	// false validation_error
	// - Name: unknown property; did you mean "name"? (names are case-sensitive)
	// - name: missing required property (expected string)
}

func ExampleEngine_CallAll() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("greet", "Greet someone", greet))
	e := engine.New(reg, nil)

	results, err := e.CallAll(context.Background(), []wield.Call{
		{Tool: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)},
		{Tool: "weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{Tool: "greet", Arguments: json.RawMessage(`{"name":"Grace"}`)},
	})
	if err != nil {
		fmt.Println("system failure:", err)
		return
	}
	for _, r := range results {
		fmt.Println(r.Tool, r.OK, r.Text())
	}
	// Output:
	// greet true Hello, Ada!
	// weather false Can not find tool named 'weather'
	// greet true Hello, Grace!
}

func ExampleEngine_Call_toolkit() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		wield.Func("greet", "Greet someone", greet),
		wield.Func("calculator", "Add two numbers", func(_ context.Context, in struct{ A, B float64 }) (float64, error) {
			return in.A + in.B, nil
		}),
	)
	e := engine.New(reg, nil)
	kit, err := reg.CreateToolkit("A", "greet")
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := kit.Bind(e) // agent A sees only its toolkit
	ctx := context.Background()

	res, _ := agent.Call(ctx, wield.Call{Tool: "greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
	fmt.Println(res.OK, res.Text())
	res, _ = agent.Call(ctx, wield.Call{Tool: "calculator", Arguments: json.RawMessage(`{"A":1,"B":2}`)})
	fmt.Println(res.OK, res.ErrorType, res.Text())
	// Output:
	// true Hello, Ada!
	// false tool_not_found Tool 'calculator' not available in A's toolkit
}

func ExampleDigest() {
	a := engine.Digest([]byte(`{"path":"/tmp/x","force":true}`))
	b := engine.Digest([]byte(`{ "force": true, "path": "/tmp/x" }`))
	c := engine.Digest([]byte(`{"path":"/etc","force":true}`))
	fmt.Println(a == b, a == c, len(a))
	// Output:
	// true false 64
}

func ExampleTruncate() {
	text := []byte(strings.Repeat("a", 200) + strings.Repeat("z", 200))
	out := engine.Truncate(text, 160)
	var s string
	_ = json.Unmarshal(out, &s)
	fmt.Println(len(out) <= 160)
	fmt.Printf("%q\n", s)
	// Output:
	// true
	// "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n\n[... 330 bytes cut here: the output was 400 bytes, over the 160-byte budget ...]\n\nzzzzzzzzzzzzzzzzzzzzzzzz"
}

func ExampleEngine_Go() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("wait", "Wait until canceled", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	e := engine.New(reg, nil)
	defer e.Close(context.Background())

	p := e.Go(context.Background(), wield.Call{Tool: "wait"})
	fmt.Println("ID known at once:", p.ID() != "")
	_, _, done := p.TryResult()
	fmt.Println("done:", done)

	p.Cancel()
	<-p.Done()
	res, err, done := p.TryResult()
	fmt.Println("done:", done, err, res.ErrorType, res.CallID == p.ID())
	// Output:
	// ID known at once: true
	// done: false
	// done: true <nil> canceled true
}
