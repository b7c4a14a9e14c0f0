//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"
)

// forcePushSpellings are other ways to write the forced push; each must
// be stopped as the plain one is, through the real agent.
var forcePushSpellings = []string{
	"git -C . push -f origin HEAD:main",
	"git push origin +HEAD:main",
	"bash -c 'git push --force origin HEAD:main'",
	"eval 'git push --force origin HEAD:main'",
	"echo 'git push --force origin HEAD:main' | sh",
	"G=git; $G push --force origin HEAD:main", // not known statically: ask, and nobody can answer
}

// stopped asserts nothing of line ran and the hook said why.
func (w *world) stopped(m *modelServer, out string) {
	w.t.Helper()
	w.mustHaveCalled(m, out)
	if w.pushMoved() {
		w.t.Errorf("the forced push ran: origin's main moved")
	}
	if w.exists(filepath.Join(w.project, deniedCanary)) {
		w.t.Errorf("the line ran: %s exists", deniedCanary)
	}
	if !m.ResultContains("agent-shim") {
		w.t.Errorf("the hook's reason did not reach the model; tool results: %q", m.Results())
	}
}

// TestForcePushSpellings: the never-allow rule holds against its usual
// bypasses, in Claude Code's bypass mode and Codex with approvals and
// sandbox bypassed.
func TestForcePushSpellings(t *testing.T) {
	t.Parallel()
	for _, spelling := range forcePushSpellings {
		line := spelling + "; touch " + deniedCanary
		t.Run("claude/"+spelling, func(t *testing.T) {
			t.Parallel()
			t.Logf("line: %q", line)
			w := newWorld(t)
			w.install("claude-code")
			m := newModelServer(t, bashCall(line))
			w.stopped(m, w.claude(m, "--permission-mode", "bypassPermissions"))
		})
		t.Run("codex/"+spelling, func(t *testing.T) {
			t.Parallel()
			t.Logf("line: %q", line)
			m := newModelServer(t, shellCall(line))
			w := codexWorld(t, m)
			w.stopped(m, w.codex(m, "--dangerously-bypass-approvals-and-sandbox"))
		})
	}
}
