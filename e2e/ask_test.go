//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// askLine matches the ask rule `git push` (external_changes): it pushes a
// new branch to the world's bare repository, which shows on disk if it ran.
const (
	askLine   = "git push origin HEAD:refs/heads/e2e-ask; touch ask-canary"
	askCanary = "ask-canary"
)

// notAsked asserts the ask line did not run, no approval was logged, and
// the model was told why and how to allow it.
func (w *world) notAsked(m *modelServer, out string) {
	w.t.Helper()
	w.mustHaveCalled(m, out)
	if refs := w.git(w.bare, "for-each-ref", "refs/heads/e2e-ask"); refs != "" {
		w.t.Errorf("the ask line ran with nobody to ask: origin has %s", refs)
	}
	if w.exists(filepath.Join(w.project, askCanary)) {
		w.t.Errorf("the ask line ran with nobody to ask: %s exists", askCanary)
	}
	approvals := filepath.Join(w.home, ".local", "state", "agent-shim", "approvals.jsonl")
	if data, err := os.ReadFile(approvals); err == nil && strings.TrimSpace(string(data)) != "" {
		w.t.Errorf("an approval was logged though nobody answered:\n%s", data)
	}
	w.t.Logf("tool results: %q", m.Results())
}

// TestAskIsDenyWhereNobodyAnswers: a line the policy asks about does not
// run where no person can answer: Claude Code headless and in bypass mode,
// Codex, Gemini CLI in yolo mode.
func TestAskIsDenyWhereNobodyAnswers(t *testing.T) {
	t.Parallel()
	t.Run("claude-default", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.install("claude-code")
		m := newModelServer(t, bashCall(askLine))
		w.notAsked(m, w.claude(m, "--permission-mode", "default"))
	})
	t.Run("claude-bypassPermissions", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.install("claude-code")
		m := newModelServer(t, bashCall(askLine))
		out := w.claude(m, "--permission-mode", "bypassPermissions")
		w.notAsked(m, out)
		if !m.ResultContains("agent-shim", "git push") {
			t.Errorf("the hook's reason did not reach the model; tool results: %q", m.Results())
		}
	})
	t.Run("codex-bypass", func(t *testing.T) {
		t.Parallel()
		m := newModelServer(t, shellCall(askLine))
		w := codexWorld(t, m)
		out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
		w.notAsked(m, out)
		if !m.ResultContains("agent-shim", "git push") {
			t.Errorf("the hook's reason did not reach the model; tool results: %q", m.Results())
		}
	})
	t.Run("gemini-yolo", func(t *testing.T) {
		t.Parallel()
		w := geminiWorld(t)
		m := newModelServer(t, runShellCall(askLine))
		out := w.gemini(m, "--yolo")
		w.notAsked(m, out)
		if !m.ResultContains("agent-shim", "git push") {
			t.Errorf("the hook's reason did not reach the model; tool results: %q", m.Results())
		}
	})
}
