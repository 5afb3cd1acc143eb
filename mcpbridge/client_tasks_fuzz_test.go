package mcpbridge

import (
	"testing"
)

// FuzzImportTaskView: whatever a server sends as a task, reading it never
// panics, a task that passes check has an ID wield can use and a status
// MCP defines, and the wait before the next poll is within its bounds.
func FuzzImportTaskView(f *testing.F) {
	f.Add([]byte(`{"taskId":"t","status":"working","pollIntervalMs":0}`))
	f.Add([]byte(`{"taskId":"t","status":"completed","pollInterval":1e12,"result":{"content":[]}}`))
	f.Add([]byte(`{"taskId":"a\u001bb","status":"dancing","pollIntervalMs":-5}`))
	f.Add([]byte(`{"taskId":"t","status":"input_required","inputRequests":{"k":{"method":"elicitation/create"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v impTaskView
		if impDecode(data, &v) != nil {
			return
		}
		if d := v.wait(); d < TaskPollMin || d > TaskPollMax {
			t.Fatalf("wait %s out of [%s, %s] for %s", d, TaskPollMin, TaskPollMax, data)
		}
		if v.check("") == "" && (v.TaskID == "" || len(v.TaskID) > taskMaxID || !impTaskStatuses[v.Status]) {
			t.Fatalf("check passed %q", data)
		}
		info := newImpTaskInfo(4)
		info.peek("tools/list", true, data)
		info.peek("initialize", true, data)
		if len(info.support) > 4 {
			t.Fatalf("%d tools kept, over the bound of 4", len(info.support))
		}
	})
}

// TestImportTaskDecode: a server's task is read with exact names, and one
// that names a member twice is refused.
func TestImportTaskDecode(t *testing.T) {
	for _, c := range []struct {
		in         string
		ok         bool
		id, status string
	}{
		{`{"taskId":"a","status":"working"}`, true, "a", "working"},
		{`{"taskId":"a","status":"working","Status":"completed","TASKID":"b"}`, true, "a", "working"},
		{`{"taskId":"a","status":"working","status":"completed"}`, false, "", ""},
		{`{"taskId":"a\xff","status":"working"}`, false, "", ""},
	} {
		var v impTaskView
		err := impDecode([]byte(c.in), &v)
		if (err == nil) != c.ok || (c.ok && (v.TaskID != c.id || v.Status != c.status)) {
			t.Errorf("impDecode(%s) = %+v, %v; want ok %v, %s %s", c.in, v, err, c.ok, c.id, c.status)
		}
	}
}
