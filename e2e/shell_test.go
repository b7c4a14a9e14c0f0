//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// setShim sets a key of config.json's agentShim section.
func (w *world) setShim(key string, value any) {
	w.t.Helper()
	path := filepath.Join(w.home, ".gemini", "config", "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		w.t.Fatal(err)
	}
	shim, _ := cfg["agentShim"].(map[string]any)
	if shim == nil {
		w.t.Fatalf("%s has no agentShim section", path)
	}
	shim[key] = value
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.write(path, string(out)+"\n")
}

// TestClaudeShellMode: with `install claude-code --shell`, Claude Code
// runs every Bash call as agent-shim-bash -c -l '<its wrapper>': shell
// mode recognises the real wrapper, so an allowed line runs (with
// requireHook too: the hook saw the command), and a denied one does not.
func TestClaudeShellMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		line        string
		requireHook bool
	}{
		{"allowed", allowedLine, false},
		{"allowed-requireHook", allowedLine, true},
		{"denied", deniedLine, false},
		{"denied-requireHook", deniedLine, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.install("claude-code", "--shell")
			if tc.requireHook {
				w.setShim("requireHook", true)
			}
			m := newModelServer(t, bashCall(tc.line))
			out := w.claude(m, "--permission-mode", "default")
			if tc.line != allowedLine {
				w.denied(m, out)
				return
			}
			w.ran(m, out)
			// It ran through shell mode, not around it.
			if !w.logged("shell", allowedLine, "allow") {
				t.Errorf("no shell-mode decision allowing %q in the decision log:\n%s", allowedLine, w.decisions())
			}
		})
	}
}

// decisions is the decision log's text.
func (w *world) decisions() string {
	data, err := os.ReadFile(filepath.Join(w.home, ".local", "state", "agent-shim", "decisions.jsonl"))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return string(data)
}

// logged reports whether the decision log holds an entry of layer for
// command with verdict.
func (w *world) logged(layer, command, verdict string) bool {
	for _, line := range strings.Split(w.decisions(), "\n") {
		var e struct {
			Layer, Command, Verdict string
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Layer == layer && e.Command == command && e.Verdict == verdict {
			return true
		}
	}
	return false
}

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

// TestGeminiShellMode: Gemini CLI runs `bash` from PATH for its shell tool
// and its hooks alike, so `install gemini-cli --shell` refuses (shell mode
// in bash's place would refuse the hook command itself: it runs
// agent-shim). Shell mode put first on PATH by hand, without the hook,
// still reads Gemini's real wrapper (shopt …; bgpids trap; the command in
// a subshell): an allowed line runs and is logged by the shell layer, and
// a denied one does not run.
func TestGeminiShellMode(t *testing.T) {
	t.Parallel()
	for _, line := range []string{allowedLine, deniedLine} {
		t.Run(strings.Fields(line)[0], func(t *testing.T) {
			t.Parallel()
			w := geminiWorld(t)
			w.refusesShell("gemini-cli")
			w.run(w.project, w.shim, "uninstall", "gemini-cli")
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

// TestCodexShellModeRefused: Codex 0.169 runs /bin/bash whatever $SHELL
// says, so `install codex --shell` refuses, saying what guards Codex
// instead, and changes nothing.
func TestCodexShellModeRefused(t *testing.T) {
	t.Parallel()
	m := newModelServer(t, shellCall(allowedLine))
	w := codexWorld(t, m)
	w.refusesShell("codex")
}

// refusesShell checks that `install <agent> --shell` exits 2 with the
// reason, and makes no shell-mode link.
func (w *world) refusesShell(agent string) {
	w.t.Helper()
	cmd := exec.Command(w.shim, "install", agent, "--shell")
	cmd.Dir, cmd.Env = w.project, w.env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "--shell is for Claude Code only") {
		w.t.Errorf("install %s --shell: %v\n%s\nwant exit 2, --shell is for Claude Code only", agent, err, out)
	}
	if _, err := os.Lstat(filepath.Join(w.home, ".local", "bin", "agent-shim-bash")); err == nil {
		w.t.Errorf("install %s --shell made the shell-mode link", agent)
	}
}

// TestClaudeBypassedHookRequireHook: with shell mode and requireHook, a
// hook taken out of the settings (bypassed: here removed by hand, keeping
// CLAUDE_CODE_SHELL) fails closed: shell mode refuses the line no hook has
// seen, and the refusal is in the decision log.
func TestClaudeBypassedHookRequireHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.install("claude-code", "--shell")
	w.setShim("requireHook", true)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s["env"] == nil || s["hooks"] == nil {
		t.Fatalf("install --shell wrote no env or hooks:\n%s", data)
	}
	delete(s, "hooks")
	out, _ := json.MarshalIndent(s, "", "  ")
	w.write(settings, string(out)+"\n")

	m := newModelServer(t, bashCall(allowedLine))
	w.blocked(m, w.claude(m, "--permission-mode", "bypassPermissions"))
	if !w.logged("shell", allowedLine, "deny") {
		t.Errorf("shell mode's refusal of %q is not in the decision log:\n%s", allowedLine, w.decisions())
	}
}
