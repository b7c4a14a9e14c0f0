//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// shellCall is Codex's shell tool running line, in whichever form the
// request offers it.
func shellCall(line string) toolCall {
	return toolCall{Tools: []string{"shell_command", "exec_command", "shell"}, Args: func(tool string) map[string]any {
		switch tool {
		case "exec_command":
			return map[string]any{"cmd": line}
		case "shell":
			return map[string]any{"command": []string{"bash", "-lc", line}}
		}
		return map[string]any{"command": line}
	}}
}

// codexHome writes CODEX_HOME's config.toml: the model server as the
// provider, over the Responses API.
func (w *world) codexHome(m *modelServer) string {
	w.t.Helper()
	home := filepath.Join(w.home, ".codex")
	w.write(filepath.Join(home, "config.toml"), fmt.Sprintf(`model = "e2e-model"
model_provider = "e2e"

[model_providers.e2e]
name = "e2e"
base_url = "%s/v1"
wire_api = "responses"
env_key = "E2E_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, m.URL()))
	return home
}

// codex runs `codex exec` against the model server.
func (w *world) codex(m *modelServer, args ...string) string {
	w.t.Helper()
	env := []string{
		"CODEX_HOME=" + filepath.Join(w.home, ".codex"),
		"E2E_API_KEY=e2e-not-a-key",
		"SHELL=/bin/bash",
	}
	out := w.agent(agentTimeout, env, agentBin(w.t, "codex"),
		append(append([]string{"exec", "--skip-git-repo-check"}, args...), "e2e: make the one tool call")...)
	w.t.Logf("codex %v:\n%s", args, out)
	return out
}

// codexWorld is a world with Codex set up against m and the hook
// installed.
func codexWorld(t *testing.T, m *modelServer) *world {
	w := newWorld(t)
	w.codexHome(m)
	t.Log(w.install("codex"))
	return w
}

// The `codex exec` modes: its default (approval never, read-only sandbox),
// the workspace-write sandbox, --approve-for-me (0.169's successor of
// --full-auto: workspace-write, approvals reviewed automatically) and no
// sandbox at all.
var codexModes = []struct {
	name string
	args []string
}{
	{"default", nil},
	{"workspace-write", []string{"--sandbox", "workspace-write"}},
	{"approve-for-me", []string{"--approve-for-me"}},
	{"bypass", []string{"--dangerously-bypass-approvals-and-sandbox"}},
}

func TestCodexAllowedRuns(t *testing.T) {
	t.Parallel()
	m := newModelServer(t, shellCall(allowedLine))
	w := codexWorld(t, m)
	out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
	w.ran(m, out)
}

// TestCodexDenyEveryMode: the hook runs right after install (install
// trusts it as Codex's /hooks would; an untrusted hook is skipped without
// a word) and its deny holds in every mode.
func TestCodexDenyEveryMode(t *testing.T) {
	t.Parallel()
	for _, mode := range codexModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			m := newModelServer(t, shellCall(deniedLine))
			w := codexWorld(t, m)
			out := w.codex(m, mode.args...)
			w.denied(m, out)
		})
	}
}

// TestCodexHookFailureBlocks: Codex lets a call run when its hook fails;
// the hook command install writes turns every failure into a block.
func TestCodexHookFailureBlocks(t *testing.T) {
	t.Parallel()
	for _, f := range hookFailures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			m := newModelServer(t, shellCall(allowedLine))
			w := codexWorld(t, m)
			w.breakShim(f.script)
			out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
			w.blocked(m, out)
		})
	}
}

// TestCodexControlHookAnswer holds the hook's answer itself to Codex,
// trust aside (--dangerously-bypass-hook-trust): when the tests above
// fail, this one says whether the answer or the trust is at fault.
func TestCodexControlHookAnswer(t *testing.T) {
	t.Parallel()
	m := newModelServer(t, shellCall(deniedLine))
	w := codexWorld(t, m)
	out := w.codex(m, "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust")
	w.denied(m, out)
}

// TestCodexStaleTrust: when the hook entry changes after install (here its
// timeout), Codex's trusted_hash no longer matches and Codex skips the hook
// without a word: doctor must say so (exit 1), and the line really runs
// then. Installing again trusts the hook again, and the deny holds.
func TestCodexStaleTrust(t *testing.T) {
	t.Parallel()
	m := newModelServer(t, shellCall(deniedLine))
	w := codexWorld(t, m)
	w.env = append(w.env, "CODEX_HOME="+filepath.Join(w.home, ".codex"))
	hooksJSON := filepath.Join(w.home, ".codex", "hooks.json")
	data, err := os.ReadFile(hooksJSON)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"timeout":\s*(\d+)`)
	if !re.Match(data) {
		t.Fatalf("no timeout in %s:\n%s", hooksJSON, data)
	}
	w.write(hooksJSON, re.ReplaceAllString(string(data), `"timeout": 29`))
	if code, out := w.doctor(); code != 1 {
		t.Errorf("doctor with the hook changed after it was trusted: exit %d, want 1\n%s", code, out)
	}
	// Codex really skips it: the denied line runs (a forced push to the
	// world's own bare repository), the second line taken away (it would
	// refuse the push; installing again puts it back).
	w.dropSecondLine("codex")
	w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
	if !w.pushMoved() {
		t.Errorf("Codex ran the changed, untrusted hook: the premise of this test is gone (tool results: %q)", m.Results())
	}

	t.Log(w.install("codex"))
	if code, out := w.doctor(); code != 0 {
		t.Errorf("doctor after installing again: exit %d, want 0\n%s", code, out)
	}
	w.git(w.project, "commit", "-q", "--amend", "-m", "three") // diverge again
	if err := os.Remove(filepath.Join(w.project, deniedCanary)); err != nil {
		t.Fatal(err)
	}
	w.bareRef = w.git(w.bare, "rev-parse", "main")
	m2 := newModelServer(t, shellCall(deniedLine))
	w.codexHome(m2)
	t.Log(w.install("codex"))
	out := w.codex(m2, "--dangerously-bypass-approvals-and-sandbox")
	w.denied(m2, out)
}
