package hookmode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// TestCall: what cannot be read as one call of the agent's is an error,
// never an answer; `rm -rf /` (never allowed) is answered deny in every
// agent's protocol. Nothing here runs a command: they are data.
func TestCall(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	call := func(event, command string) string {
		return fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":%q,"tool_name":"Bash","tool_input":{"command":%q}}`, dir, event, command)
	}
	tests := []struct {
		agent   *agents.Agent
		in      string
		wantErr string // "" wants the answer deny
	}{
		{agents.Claude, `not json`, "malformed"},
		{agents.Claude, `{"hook_event_name":"PreToolUse","hook_event_name":"PreToolUse"}`, "duplicate key"},
		{agents.Claude, call("", "ls"), "no hook_event_name"},
		{agents.Gemini, call("PreToolUse", "ls"), `unknown event "PreToolUse"`},
		{agents.Codex, call("PostToolUse", "ls"), `unknown event "PostToolUse"`},
		{agents.Claude, strings.Replace(call("PreToolUse", "ls"), dir, "relative", 1), "cwd"},
		{agents.Claude, call("PreToolUse", "rm -rf /"), ""},
		{agents.Codex, call("PreToolUse", "rm -rf /"), ""},
		{agents.Gemini, call("BeforeTool", "rm -rf /"), ""},
	}
	for _, tc := range tests {
		t.Logf("input: %s %s", tc.agent.Name, tc.in)
		var out, warn bytes.Buffer
		o := Options{Agent: tc.agent, Getenv: func(k string) string { return env[k] }, Tickets: tickets.Store{Dir: filepath.Join(dir, "state")}, Warn: &warn}
		err := Call(context.Background(), o, strings.NewReader(tc.in), &out)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || out.Len() > 0 {
				t.Errorf("got %v, answer %q; want an error with %q and no answer", err, out.String(), tc.wantErr)
			}
		case err != nil:
			t.Errorf("error: %v (%s)", err, warn.String())
		case !strings.Contains(out.String(), `"deny"`):
			t.Errorf("answered %q, want deny", out.String())
		}
	}
	// Past MaxInput: refused unread.
	err := Call(context.Background(), Options{Agent: agents.Claude, Warn: io.Discard}, io.LimitReader(zeros{}, MaxInput+2), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("an input past MaxInput: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestTicketsOnlyForShellMode: the hook leaves a ticket for shell mode
// only where shell mode may run the agent's lines: not for Codex or Gemini
// CLI (shell mode does not serve them), nor for Claude Code whose shell
// is another program; for Claude Code whose shell is this program, or
// cannot be told, it does.
func TestTicketsOnlyForShellMode(t *testing.T) {
	self := filepath.Join(t.TempDir(), "agent-shim")
	if err := os.WriteFile(self, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		agent *agents.Agent
		event string
		env   map[string]string
		want  bool
	}{
		{"codex", agents.Codex, "PreToolUse", nil, false},
		{"gemini", agents.Gemini, "BeforeTool", nil, false},
		{"claude, another shell", agents.Claude, "PreToolUse", map[string]string{"CLAUDE_CODE_SHELL": "/bin/sh"}, false},
		{"claude, SHELL another", agents.Claude, "PreToolUse", map[string]string{"SHELL": "/bin/sh"}, false},
		{"claude, shell mode", agents.Claude, "PreToolUse", map[string]string{"CLAUDE_CODE_SHELL": self, "SHELL": "/bin/sh"}, true},
		{"claude, SHELL shell mode", agents.Claude, "PreToolUse", map[string]string{"SHELL": self}, true},
		{"claude, no shell known", agents.Claude, "PreToolUse", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "xdg")}
			for k, v := range tc.env {
				env[k] = v
			}
			state := filepath.Join(dir, "state")
			in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":%q,"tool_name":%q,"tool_input":{"command":"curl https://example.com/x"}}`, dir, tc.event, tc.agent.ShellTool)
			var out, warn bytes.Buffer
			o := Options{Agent: tc.agent, Getenv: func(k string) string { return env[k] }, Tickets: tickets.Store{Dir: state}, Warn: &warn,
				Self: func() (string, error) { return self, nil }}
			if err := Call(context.Background(), o, strings.NewReader(in), &out); err != nil {
				t.Fatalf("%v (%s)", err, warn.String())
			}
			entries, _ := os.ReadDir(filepath.Join(state, "tickets"))
			if got := len(entries) > 0; got != tc.want {
				t.Errorf("a ticket left: %v, want %v (answer %s)", got, tc.want, out.String())
			}
		})
	}
}
