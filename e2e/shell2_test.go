//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shellFirst puts a directory holding `bash`, a link to this world's
// agent-shim, first on PATH: Gemini CLI on Linux runs `bash -c` from PATH
// (getShellConfiguration) whatever $SHELL says, for its shell tool and
// for its hooks alike.
func (w *world) shellFirst() {
	w.t.Helper()
	dir := filepath.Join(w.dir, "shellbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Symlink(w.shim, filepath.Join(dir, "bash")); err != nil {
		w.t.Fatal(err)
	}
	for i, kv := range w.env {
		if strings.HasPrefix(kv, "PATH=") {
			w.env[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
}

// TestGeminiShellMode: with shell mode as Gemini CLI's bash, its real
// wrapper (shopt …; bgpids trap; the command in a subshell) is recognised:
// an allowed line runs and is logged by the shell layer, and a denied one
// does not run. Gemini CLI runs its hook command through the same bash,
// so shell mode meets the installed hook command too and must let it run.
func TestGeminiShellMode(t *testing.T) {
	t.Parallel()
	for _, line := range []string{allowedLine, deniedLine} {
		t.Run(strings.Fields(line)[0], func(t *testing.T) {
			t.Parallel()
			w := geminiWorld(t)
			w.shellFirst()
			m := newModelServer(t, runShellCall(line))
			out := w.gemini(m, "--yolo")
			if line == deniedLine {
				w.denied(m, out)
				return
			}
			w.ran(m, out)
			if !w.logged("shell", allowedLine, "allow") {
				t.Errorf("no shell-mode decision allowing %q in the decision log:\n%s", allowedLine, w.decisions())
			}
		})
	}
}
