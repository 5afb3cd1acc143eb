package httpapi_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestOpenAPIEvent: the Event schema of openapi.json (additionalProperties:
// false) names exactly the fields an event is written with, its progress's
// too, so that a client generated from it reads every event.
func TestOpenAPIEvent(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var doc struct {
		Components struct {
			Schemas map[string]object `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["Event"]
	var progress object
	if err := json.Unmarshal(schema.Properties["progress"], &progress); err != nil {
		t.Fatalf("the Event schema's progress: %v", err)
	}
	// Every field set.
	e := wield.Event{ID: "i", Type: wield.EventExecutionProgress, Time: time.Now(), Tool: "t", CallID: "c", CallerID: "a",
		ConversationID: "v", ErrorType: wield.ErrExecution, Error: "e", Duration: time.Second, Attempts: 2, ApprovalID: "p",
		Message: "m", Source: "s", Server: "o", Progress: &wield.Progress{Progress: 1, Total: 2}}
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]json.RawMessage
	if err := json.Unmarshal(out, &written); err != nil {
		t.Fatal(err)
	}
	var writtenProgress map[string]json.RawMessage
	if err := json.Unmarshal(written["progress"], &writtenProgress); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var k []string
		for n := range m {
			k = append(k, n)
		}
		slices.Sort(k)
		return k
	}
	if diff := cmp.Diff(keys(schema.Properties), keys(written)); diff != "" {
		t.Errorf("Event: the schema's properties (-) and an event's fields (+):\n%s", diff)
	}
	if diff := cmp.Diff(keys(progress.Properties), keys(writtenProgress)); diff != "" {
		t.Errorf("Event.progress: the schema's properties (-) and the event's (+):\n%s", diff)
	}
}
