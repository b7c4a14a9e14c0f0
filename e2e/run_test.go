//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/decisionlog"
)

// scriptLine runs a script of the checkout that force-pushes: opaque to
// the hook's reading, decided as it runs by the run-time layer.
const scriptLine = "bash push.sh"

// plantLine runs a script of the checkout that rewrites the agent's own
// settings (where its hook is): opaque to the hook's reading; the layer
// keeps the file read-only while the agent writes the rest of its
// directory.
const plantLine = "bash plant.sh"

// TestRunAgentUnderLayer: `agent-shim run -- <agent>` (Codex, Claude Code,
// Gemini CLI), the README's way to put an agent's every command under the
// run-time layer, works together with the installed hook, in a home
// outside the temporary directories (which the layer lets anything
// write): the agent starts and keeps its own state in its own directory,
// an allowed line runs, a denied one is refused by the hook, a script's
// force push, which no static reading sees, is refused when git runs,
// and a script that rewrites the agent's settings leaves them as they
// were.
func TestRunAgentUnderLayer(t *testing.T) {
	t.Parallel()
	calls := func(call func(string) toolCall) []toolCall {
		return []toolCall{call(allowedLine), call(deniedLine), call(scriptLine), call(plantLine)}
	}
	// setUp writes the scripts; settings is the agent's settings file,
	// state a directory the agent makes in its own directory as it runs.
	setUp := func(w *world, settings string) (check func(m *modelServer, out, state string)) {
		w.write(filepath.Join(w.project, "push.sh"), "git push --force origin HEAD:main\ntouch script-canary\n")
		w.write(filepath.Join(w.project, "plant.sh"), "echo '{}' > '"+settings+"'\ntouch plant-canary\n")
		w.wrap, w.byName = []string{w.shim, "run", "--"}, true
		before, err := os.ReadFile(settings)
		if err != nil {
			w.t.Fatal(err)
		}
		return func(m *modelServer, out, state string) {
			t := w.t
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
			if !w.exists(filepath.Join(w.project, "plant-canary")) {
				t.Errorf("the planting script did not run; tool results: %q", m.Results())
			}
			if after, err := os.ReadFile(settings); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the agent's settings changed under agent-shim run: %q (%v)", after, err)
			}
			if !w.exists(state) {
				t.Errorf("the agent kept no state under agent-shim run: %s is missing; output:\n%s", state, out)
			}
			// The hook's decisions reach the person's log, as the tree's
			// word: the hook runs inside it.
			log, _ := os.ReadFile(filepath.Join(w.home, ".local", "state", "agent-shim", "decisions.jsonl"))
			found := false
			for line := range bytes.Lines(log) {
				var e decisionlog.Entry
				if json.Unmarshal(line, &e) == nil && e.Layer == decisionlog.LayerHook && e.Verdict == "deny" && e.Tree && strings.Contains(e.Command, "git push --force") {
					found = true
				}
			}
			if !found {
				t.Errorf("the hook's deny under agent-shim run is not in the decision log as the tree's word:\n%s", log)
			}
		}
	}
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		m := newModelServer(t, calls(shellCall)...)
		w := newWorldOutsideTemp(t)
		w.codexHome(m)
		w.install("codex")
		check := setUp(w, filepath.Join(w.home, ".codex", "hooks.json"))
		out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
		check(m, out, filepath.Join(w.home, ".codex", "sessions"))
	})
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		w := newWorldOutsideTemp(t)
		w.install("claude-code")
		m := newModelServer(t, calls(bashCall)...)
		check := setUp(w, filepath.Join(w.home, ".claude", "settings.json"))
		out := w.claude(m, "--permission-mode", "bypassPermissions")
		check(m, out, filepath.Join(w.home, ".claude", "projects"))
	})
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		w := geminiSetUp(newWorldOutsideTemp(t))
		m := newModelServer(t, calls(runShellCall)...)
		check := setUp(w, filepath.Join(w.geminiHome(), ".gemini", "settings.json"))
		out := w.gemini(m, "--yolo")
		check(m, out, filepath.Join(w.geminiHome(), ".gemini", "tmp"))
	})
}
