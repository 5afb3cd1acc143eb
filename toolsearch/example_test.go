package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolsearch"
)

func exampleTools() []*wield.Tool {
	return []*wield.Tool{
		fixed("jira_create_issue", "Create a Jira issue (bug, task or story) in a project."),
		fixed("jira_add_comment", "Add a comment to a Jira issue."),
		fixed("slack_post_message", "Post a message to a Slack channel."),
		fixed("weather_forecast", "Get the daily weather forecast at a place."),
	}
}

func ExampleIndex_Search() {
	ix := toolsearch.New(exampleTools())
	for _, h := range ix.Search("open a bug about the login page crashing", 2) {
		fmt.Println(h.Tool.Name)
	}
	// Output:
	// jira_create_issue
	// jira_add_comment
}

func ExampleTool() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(exampleTools()...)
	search := toolsearch.Tool(toolsearch.Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), nil)
	reg.MustRegister(search)
	e := engine.New(reg, nil)
	defer e.Close(context.Background())

	// The model sees search_tools alone when the catalog is large.
	offered := toolsearch.Catalog(reg.List(wield.Query{}), 3, search)
	fmt.Println(len(offered), offered[0].Name)

	res, err := e.Call(context.Background(), wield.Call{Tool: "search_tools", Arguments: json.RawMessage(`{"query":"what will the weather be like tomorrow","limit":1}`)})
	if err != nil {
		fmt.Println("system failure:", err)
		return
	}
	var out toolsearch.SearchOutput
	if err := json.Unmarshal(res.Output, &out); err != nil {
		fmt.Println(err)
		return
	}
	// The agent loop adds the definitions found to the model's tools.
	for _, f := range out.Tools {
		fmt.Println(f.Name, f.InputSchema.Type)
	}
	// Output:
	// 1 search_tools
	// weather_forecast object
}
