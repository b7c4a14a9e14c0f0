//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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

// TestGeminiShellMode: with shell mode as Gemini CLI's bash, its real
// wrapper (shopt …; bgpids trap; the command in a subshell) is recognised:
// an allowed line runs and is logged by the shell layer, and a denied one
// does not run. Gemini CLI runs its hook command through the same bash,
// so shell mode meets the installed hook command too and must let it run.
func TestGeminiShellMode(t *testing.T) {
	t.Parallel()
	missingInTree(t, "f7809e2", "Gemini CLI runs its hook command through the same bash, and shell mode refuses it (it runs agent-shim), so every call is blocked")
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

// TestCodexShellModeHint follows what `install codex --shell` tells the
// person to do (start Codex with SHELL set to the shell-mode link) and
// checks that Codex's commands then go through shell mode: the link must
// exist, and the allowed line must be decided by the shell layer.
func TestCodexShellModeHint(t *testing.T) {
	t.Parallel()
	missingInTree(t, "f7809e2", "install codex --shell names a link it does not make, and Codex 0.169 runs /bin/bash whatever $SHELL says")
	m := newModelServer(t, shellCall(allowedLine))
	w := codexWorld(t, m)
	out := w.install("codex", "--shell")
	match := regexp.MustCompile(`(?m)^\s*SHELL=(\S+) codex$`).FindStringSubmatch(out)
	if match == nil {
		t.Fatalf("install codex --shell does not say how to start Codex with SHELL=…:\n%s", out)
	}
	link := strings.Trim(match[1], `'"`)
	if _, err := os.Stat(link); err != nil {
		t.Errorf("install codex --shell names %s, which does not exist: %v", link, err)
	}
	w.env = append(w.env, "SHELL="+link)
	out = w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
	w.ran(m, out)
	if !w.logged("shell", allowedLine, "allow") {
		t.Errorf("Codex started as install says ran its command around shell mode: no shell-layer decision for %q:\n%s", allowedLine, w.decisions())
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
