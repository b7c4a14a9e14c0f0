//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// verifyChecks are the checks `agent-shim verify` reports, in order.
var verifyChecks = []string{"allowed", "denied", "asked", "hook-missing", "hook-crash", "second-line"}

// verify runs `agent-shim verify agent` as the world's person (their
// home, their PATH), and returns its exit status and output.
func (w *world) verify(agent string) (int, string) {
	w.t.Helper()
	cmd := exec.Command(shimBin, "verify", "--parallel", "2", agent)
	cmd.Dir = w.project
	cmd.Env = w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	w.t.Logf("agent-shim verify %s:\n%s", agent, out.String())
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return 0, out.String()
}

// pathFirst puts dir first on the world's PATH.
func (w *world) pathFirst(dir string) {
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "PATH=") {
			w.env[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
}

// TestVerifyPinned: `agent-shim verify` is green for the three pinned
// agents, each check passing, and changes nothing in the person's home.
func TestVerifyPinned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		agent string
		world func(*testing.T) *world
	}{
		{"claude-code", func(t *testing.T) *world { w := newWorld(t); w.install("claude-code"); return w }},
		{"codex", func(t *testing.T) *world { return codexWorld(t, newModelServer(t)) }},
		{"gemini-cli", func(t *testing.T) *world { return geminiWorld(t) }},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			w := tc.world(t)
			before := snapshot(t, w.home, w.geminiHome(), w.project)
			code, out := w.verify(tc.agent)
			if code != 0 {
				t.Errorf("agent-shim verify %s: exit %d, want 0 (green)", tc.agent, code)
			}
			for _, c := range verifyChecks {
				if !strings.Contains(out, "ok    "+c+":") {
					t.Errorf("check %s did not pass", c)
				}
			}
			if d := diffSnapshots(before, snapshot(t, w.home, w.geminiHome(), w.project)); len(d) > 0 {
				t.Errorf("verify changed the person's files: %q", d)
			}
		})
	}
}

// TestVerifyFailOpenRelease: for Claude Code 2.1.197, which ignores
// "onFailure" and lets a call through when its hook fails, verify is red
// and names the checks that failed; the control and the others pass, so
// the red is this release's.
func TestVerifyFailOpenRelease(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.install("claude-code")
	w.pathFirst(filepath.Dir(specBin(t, claudeOld, "claude")))
	code, out := w.verify("claude-code")
	if code != 1 {
		t.Errorf("agent-shim verify claude-code with %s: exit %d, want 1 (red)", claudeOld, code)
	}
	if !strings.Contains(out, "2.1.197") {
		t.Errorf("verify does not say which release it ran")
	}
	for _, c := range []string{"hook-missing", "hook-crash"} {
		if !strings.Contains(out, "FAIL  "+c+":") {
			t.Errorf("check %s did not fail", c)
		}
	}
	if !strings.Contains(out, "red: hook-missing, hook-crash failed") {
		t.Errorf("verify does not name the failing checks on its last line")
	}
	for _, c := range []string{"allowed", "denied", "asked", "second-line"} {
		if !strings.Contains(out, "ok    "+c+":") {
			t.Errorf("check %s did not pass: the red is not (only) the release's failing hooks", c)
		}
	}
}

// TestVerifyNothingInstalled: with no hook installed, verify is red and
// says to install it.
func TestVerifyNothingInstalled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	code, out := w.verify("claude-code")
	if code != 1 || !strings.Contains(out, "FAIL  installed:") || !strings.Contains(out, "agent-shim install claude-code") {
		t.Errorf("verify with no hook installed: exit %d, want 1 and the install command", code)
	}
}
