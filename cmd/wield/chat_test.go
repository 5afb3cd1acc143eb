package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
)

// TestChatAgentUndefinedToolLocated: an agent file naming a tool that no
// loaded file defines stops wield chat with the one located form,
// file:line:col at the name, and no registry prefix.
func TestChatAgentUndefinedToolLocated(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	dir := t.TempDir()
	file := filepath.Join(dir, "helper.yaml")
	if err := os.WriteFile(file, []byte("kind: agent\nname: helper\ntools:\n  - echo\n  - nosuch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runIn(t, "hi\n", "chat", "--agent", file, "--model", "http://127.0.0.1:9/v1/m")
	want := file + `:5:5: agent "helper": tool "nosuch" is not defined`
	if code == 0 || !strings.Contains(errs, want) || strings.Contains(errs, "wield: not found") || strings.Contains(errs, "create toolkit") || strings.Count(errs, "nosuch") != 1 {
		t.Errorf("exit %d, stderr:\n%s%s\nwant %q, once", code, errs, out, want)
	}
}

// TestChatFallbackNamesItsAgent: the notice of a fallback to the prompt
// names the agent that fell back and the format of that agent, not the
// lead's.
func TestChatFallbackNamesItsAgent(t *testing.T) {
	lead := &agent.Agent{Name: "lead"}
	sub := &agent.Agent{Name: "search", Strategy: llm.OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: llm.PromptJSON}}
	var s chatStrategy
	var b bytes.Buffer
	f := s.onFallback(&b, lead, map[string]*agent.Agent{"lead": lead, "search": sub})
	f("search", errors.New("does not support tools"))
	f("lead", errors.New("does not support tools"))
	// The lead need not be among the sub-agents (chat, without --agent, is
	// not): its own format is told.
	chat := &agent.Agent{Name: "chat", Strategy: sub.Strategy}
	s.onFallback(&b, chat, map[string]*agent.Agent{"search": lead})("chat", errors.New("does not support tools"))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "agent search:") || !strings.Contains(lines[0], "(JSON)") ||
		!strings.Contains(lines[1], "agent lead:") || !strings.Contains(lines[1], "(the XML call format)") ||
		!strings.Contains(lines[2], "agent chat:") || !strings.Contains(lines[2], "(JSON)") {
		t.Errorf("notices:\n%s", b.String())
	}
}
