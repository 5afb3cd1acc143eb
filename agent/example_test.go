package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/engine"
)

type calcIn struct {
	A  float64 `json:"a"`
	B  float64 `json:"b"`
	Op string  `json:"op" enum:"+,-,*,/"`
}

func calculate(_ context.Context, in calcIn) (float64, error) {
	switch in.Op {
	case "+":
		return in.A + in.B, nil
	case "-":
		return in.A - in.B, nil
	case "*":
		return in.A * in.B, nil
	}
	if in.B == 0 {
		return 0, wield.Errorf(wield.ErrExecution, "division by zero")
	}
	return in.A / in.B, nil
}

// A sub-agent runs an agent's tool calls through the engine, and sums them up
// for the agent's final answer.
func ExampleSubAgent() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		wield.Func("echo", "Echo a message", func(_ context.Context, in echoIn) (string, error) {
			return in.Message, nil
		}),
		wield.Func("calculator", "Apply an operator to two numbers", calculate),
	)
	sub := agent.NewSubAgent(engine.New(reg, nil), agent.SubAgentOptions{
		ID:             "tool_sub_agent_001",
		ParentID:       "conversation_agent_001",
		ConversationID: "conv_001",
	})
	ctx := context.Background()

	res, err := sub.Execute(ctx, "echo", json.RawMessage(`{"message":"hello"}`), 0)
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(res.Text())

	results, err := sub.ExecuteBatch(ctx, []agent.BatchCall{
		{Tool: "calculator", Args: json.RawMessage(`{"a":1,"b":2,"op":"+"}`)},
		{Tool: "calculator", Args: json.RawMessage(`{"a":1,"b":0,"op":"/"}`)},
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, r := range results {
		fmt.Println(r.Text())
	}

	brief, _ := json.Marshal(sub.Brief())
	fmt.Println(string(brief))
	// Output:
	// hello
	// 3
	// Error: division by zero
	// {"total_calls":3,"success_rate":66.7,"tool_usage":{"calculator":2,"echo":1},"has_errors":true}
}
