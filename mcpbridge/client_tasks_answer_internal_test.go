package mcpbridge

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// impTaskAnswers are answers to a tools/call made as a task with the
// extension: a task, one that does not read as one, a plain result, a
// question, and what is not an object.
var impTaskAnswers = []string{
	`{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":500}`,
	`{"resultType":"task","taskId":"t2","status":"completed","result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"resultType":"task","taskId":"t3","status":5}`,
	`{"resultType":"complete","content":[{"type":"text","text":"at once"}],"isError":false}`,
	`{"resultType":"complete","content":[],"status":7}`,
	`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create"}}}`,
	`[1,2]`,
}

// TestTaskAnswerReadOnce: the answer read once (head and task together)
// says what the head and then the task, read one after the other, said.
func TestTaskAnswerReadOnce(t *testing.T) {
	for _, ans := range impTaskAnswers {
		var wantHead impTaskHead
		wantRead := impDecode([]byte(ans), &wantHead) == nil
		var want *impTaskView
		if wantRead && wantHead.ResultType == "task" {
			want = &impTaskView{}
			if impDecode([]byte(ans), want) != nil {
				want = nil
			}
		}
		head, v, read := impTaskAnswer(json.RawMessage(ans), true)
		if read != wantRead || head.ResultType != wantHead.ResultType {
			t.Errorf("%s: head %+v read %v, want %+v read %v", ans, head, read, wantHead, wantRead)
		}
		if head.ResultType != "task" {
			continue // the task is read only for a task
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("%s: task (-read twice +once):\n%s", ans, diff)
		}
	}
}

// BenchmarkTaskAnswer compares reading the answer that makes a task: once
// (now) and head then task (before).
func BenchmarkTaskAnswer(b *testing.B) {
	ans := json.RawMessage(impTaskAnswers[0])
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, v, _ := impTaskAnswer(ans, true); v == nil {
				b.Fatal("no task")
			}
		}
	})
	b.Run("twice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var head impTaskHead
			var v impTaskView
			if impDecode(ans, &head) != nil || impDecode(ans, &v) != nil {
				b.Fatal("no task")
			}
		}
	})
}
