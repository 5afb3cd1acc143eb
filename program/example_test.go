package program_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
)

// A program adds numbers with a tool in a loop; each add is a call of its
// own through the engine.
func ExampleRun() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("add", "Add two integers", func(_ context.Context, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	}))
	eng := engine.New(reg, nil)
	out, err := program.Run(context.Background(), "total = 0\nfor i in range(4):\n    total = add(a=total, b=i)\nresult = total\n",
		program.Options{Invoker: eng, Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	// Output: {"result":6,"calls":4}
}

// The tool's description shows the model each tool as a function.
func ExampleSignature() {
	t := wield.Func("greet", "Greet someone", func(_ context.Context, in struct {
		Name  string `json:"name" description:"who to greet"`
		Shout bool   `json:"shout,omitempty"`
	}) (string, error) {
		return "hi " + in.Name, nil
	})
	fmt.Println(program.Signature(t))
	// Output:
	// greet(name: str, shout: bool = None)
	//     Greet someone
	//     name: who to greet
}
