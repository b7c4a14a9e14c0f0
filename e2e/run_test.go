//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"
)

// scriptLine runs a script of the checkout that force-pushes: opaque to
// the hook's reading, decided as it runs by the run-time layer.
const scriptLine = "bash push.sh"

// TestRunAgentUnderLayer: `agent-shim run -- <agent>` (Codex, Claude Code,
// Gemini CLI), the README's way to
// put an agent's every command under the run-time layer, works together
// with the installed hook: the agent starts and keeps its own state, an
// allowed line runs, a denied one is refused by the hook, and a script's
// force push, which no static reading sees, is refused when git runs.
func TestRunAgentUnderLayer(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, w *world, m *modelServer, out string) {
		t.Helper()
		w.mustHaveCalled(m, out)
		if !w.exists(filepath.Join(w.project, allowedCanary)) {
			t.Errorf("the allowed line did not run under agent-shim run; tool results: %q", m.Results())
		}
		if w.exists(filepath.Join(w.project, deniedCanary)) {
			t.Errorf("the denied line ran under agent-shim run")
		}
		if w.pushMoved() {
			t.Errorf("a force push ran under agent-shim run: origin's main moved; tool results: %q", m.Results())
		}
		if !w.exists(filepath.Join(w.project, "script-canary")) {
			t.Errorf("the script did not run past its refused push; tool results: %q", m.Results())
		}
	}
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		m := newModelServer(t, shellCall(allowedLine), shellCall(deniedLine), shellCall(scriptLine))
		w := codexWorld(t, m)
		w.write(filepath.Join(w.project, "push.sh"), "git push --force origin HEAD:main\ntouch script-canary\n")
		w.wrap = []string{w.shim, "run", "--"}
		out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
		check(t, w, m, out)
	})
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.install("claude-code")
		w.write(filepath.Join(w.project, "push.sh"), "git push --force origin HEAD:main\ntouch script-canary\n")
		m := newModelServer(t, bashCall(allowedLine), bashCall(deniedLine), bashCall(scriptLine))
		w.wrap = []string{w.shim, "run", "--"}
		out := w.claude(m, "--permission-mode", "bypassPermissions")
		check(t, w, m, out)
	})
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		w := geminiWorld(t)
		w.write(filepath.Join(w.project, "push.sh"), "git push --force origin HEAD:main\ntouch script-canary\n")
		m := newModelServer(t, runShellCall(allowedLine), runShellCall(deniedLine), runShellCall(scriptLine))
		w.wrap = []string{w.shim, "run", "--"}
		out := w.gemini(m, "--yolo")
		check(t, w, m, out)
	})
}
