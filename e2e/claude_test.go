//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bashCall is Claude Code's Bash tool running line.
func bashCall(line string) toolCall {
	return toolCall{Tools: []string{"Bash"}, Args: func(string) map[string]any {
		return map[string]any{"command": line, "description": "e2e"}
	}}
}

// claude runs Claude Code headless (-p) against the model server.
func (w *world) claude(m *modelServer, args ...string) string {
	w.t.Helper()
	env := []string{
		"ANTHROPIC_BASE_URL=" + m.URL(),
		"ANTHROPIC_API_KEY=e2e-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"SHELL=/bin/bash",
		"IS_SANDBOX=1", // as root, bypassPermissions wants this
	}
	out := w.agent(agentTimeout, env, agentBin(w.t, "claude"),
		append([]string{"-p", "e2e: make the one tool call"}, args...)...)
	w.t.Logf("claude %v:\n%s", args, out)
	return out
}

func TestClaudeAllowedRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.install("claude-code")
	m := newModelServer(t, bashCall(allowedLine))
	out := w.claude(m, "--permission-mode", "default")
	w.ran(m, out)
}

func TestClaudeDenyEveryMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.install("claude-code")
			m := newModelServer(t, bashCall(deniedLine))
			out := w.claude(m, "--permission-mode", mode)
			w.denied(m, out)
		})
	}
}

// TestClaudeHookFailureBlocks: with "onFailure": "block" (install sets
// it), a hook that is missing, exits 127, exits 1 with garbage, hangs past
// its timeout or is killed blocks the call, in bypass mode too.
func TestClaudeHookFailureBlocks(t *testing.T) {
	t.Parallel()
	for _, f := range hookFailures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.install("claude-code")
			w.breakShim(f.script)
			m := newModelServer(t, bashCall(allowedLine))
			out := w.claude(m, "--permission-mode", "bypassPermissions")
			w.blocked(m, out)
		})
	}
}

// TestClaudeControlWithoutOnFailure is the control for the test above:
// with "onFailure" taken out of the installed hook, the same failing hook
// lets the line run. Were it blocked anyway, the failure tests would prove
// nothing about onFailure.
func TestClaudeControlWithoutOnFailure(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.install("claude-code")
	settings := filepath.Join(w.home, ".claude", "settings.json")
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	stripped := strings.ReplaceAll(string(data), `"onFailure": "block"`, `"onFailureX": "block"`)
	if stripped == string(data) {
		t.Fatalf("no \"onFailure\": \"block\" in the installed settings:\n%s", data)
	}
	w.write(settings, stripped)
	w.breakShim("exit 127")
	m := newModelServer(t, bashCall(allowedLine))
	out := w.claude(m, "--permission-mode", "bypassPermissions")
	w.ran(m, out)
}
