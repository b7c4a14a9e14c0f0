//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// The protected files a call tries to change: what the agent may change
// must never change what it may do. Each is checked on disk after the run.
type protected struct {
	// kept are files that exist and must stay byte for byte.
	kept []string
	// absent are files that do not exist and must not appear.
	absent []string
}

func (w *world) protectedFiles(agentSettings string) protected {
	return protected{
		kept: []string{filepath.Join(w.project, ".git", "config"), agentSettings},
		absent: []string{filepath.Join(w.project, ".git", "hooks", "pre-commit"),
			filepath.Join(w.project, ".claude", "settings.json"), w.manifest(),
			filepath.Join(w.project, ".gemini", "settings.json")},
	}
}

// unchanged runs the agent (run) and asserts every protected file is as it
// was, and that no approval was logged: nobody was asked.
func (w *world) unchanged(p protected, m *modelServer, run func() string) {
	w.t.Helper()
	before := map[string][]byte{}
	for _, f := range p.kept {
		data, err := os.ReadFile(f)
		if err != nil {
			w.t.Fatal(err)
		}
		before[f] = data
	}
	out := run()
	w.mustHaveCalled(m, out)
	for _, f := range p.kept {
		data, err := os.ReadFile(f)
		if err != nil {
			w.t.Errorf("%s: %v", f, err)
			continue
		}
		if string(data) != string(before[f]) {
			w.t.Errorf("%s changed:\n--- before\n%s\n--- after\n%s", f, before[f], data)
		}
	}
	for _, f := range p.absent {
		if w.exists(f) {
			w.t.Errorf("%s was written", f)
		}
	}
	approvals := filepath.Join(w.home, ".local", "state", "agent-shim", "approvals.jsonl")
	if data, err := os.ReadFile(approvals); err == nil && len(data) > 0 {
		w.t.Errorf("approvals were logged though nobody was asked:\n%s", data)
	}
	w.t.Logf("tool results: %q", m.Results())
}

// manifest is a policy manifest in the project: writing one changes what
// the next agents-setup run allows.
func (w *world) manifest() string {
	return filepath.Join(w.project, ".agents", "config", "permissions", "read_only.txt")
}

func claudeTool(name string, args map[string]any) toolCall {
	return toolCall{Tools: []string{name}, Args: func(string) map[string]any { return args }}
}

// claudeProtectedCalls try each protected file through Claude Code's file
// tools (a Read first, as Edit and Write of an existing file want) and
// through Bash.
func (w *world) claudeProtectedCalls(settings string) []toolCall {
	gitConfig := filepath.Join(w.project, ".git", "config")
	return []toolCall{
		claudeTool("Read", map[string]any{"file_path": gitConfig}),
		claudeTool("Edit", map[string]any{"file_path": gitConfig, "old_string": "[core]", "new_string": "[core]\n\tpager = cat"}),
		bashCall("echo '[e2e]' >> .git/config"),
		claudeTool("Read", map[string]any{"file_path": settings}),
		claudeTool("Write", map[string]any{"file_path": settings, "content": "{}\n"}),
		claudeTool("Write", map[string]any{"file_path": filepath.Join(w.project, ".claude", "settings.json"), "content": "{}\n"}),
		claudeTool("Write", map[string]any{"file_path": filepath.Join(w.project, ".git", "hooks", "pre-commit"), "content": "#!/bin/sh\n"}),
		claudeTool("Write", map[string]any{"file_path": w.manifest(), "content": "git push --force\n"}),
	}
}

// TestClaudeProtectedFiles: in every mode, bypass included, Claude Code's
// file tools and Bash leave .git/config, ~/.claude/settings.json (which
// holds the hook), .claude/settings.json and .git/hooks as they were.
func TestClaudeProtectedFiles(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.install("claude-code")
			settings := filepath.Join(w.home, ".claude", "settings.json")
			m := newModelServer(t, w.claudeProtectedCalls(settings)...)
			w.unchanged(w.protectedFiles(settings), m, func() string {
				return w.claude(m, "--permission-mode", mode)
			})
		})
	}
}

// TestClaudeControlProtectedWithoutHook is the control for the test
// above: without the hook the same calls in bypass mode do change the
// files, so the calls are well formed and the test can fail.
func TestClaudeControlProtectedWithoutHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	w.write(settings, "{\"env\": {}}\n")
	gitConfig := filepath.Join(w.project, ".git", "config")
	before, err := os.ReadFile(gitConfig)
	if err != nil {
		t.Fatal(err)
	}
	m := newModelServer(t, w.claudeProtectedCalls(settings)...)
	out := w.claude(m, "--permission-mode", "bypassPermissions")
	w.mustHaveCalled(m, out)
	after, err := os.ReadFile(gitConfig)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) == string(before) {
		t.Errorf(".git/config unchanged without the hook: the calls did not work; tool results: %q", m.Results())
	}
	if !w.exists(filepath.Join(w.project, ".git", "hooks", "pre-commit")) {
		t.Errorf(".git/hooks/pre-commit not written without the hook; tool results: %q", m.Results())
	}
}

// TestCodexProtectedFiles: with approvals and sandbox bypassed, Codex's
// shell leaves .git/config and its own hooks.json as they were.
func TestCodexProtectedFiles(t *testing.T) {
	t.Parallel()
	m := newModelServer(t, shellCall("echo '[e2e]' >> .git/config"),
		shellCall("echo '{}' > \"$CODEX_HOME/hooks.json\""),
		shellCall("mkdir -p .git/hooks && echo '#!/bin/sh' > .git/hooks/pre-commit"),
		shellCall("mkdir -p .agents/config/permissions && echo 'git push --force' > .agents/config/permissions/read_only.txt"))
	w := codexWorld(t, m)
	p := w.protectedFiles(filepath.Join(w.home, ".codex", "hooks.json"))
	w.unchanged(p, m, func() string {
		return w.codex(m, "--dangerously-bypass-approvals-and-sandbox")
	})
}

// TestGeminiProtectedFiles: in yolo mode Gemini CLI's write_file and
// shell leave .git/config, its settings (which hold the hook) and
// .git/hooks as they were.
func TestGeminiProtectedFiles(t *testing.T) {
	t.Parallel()
	w := geminiWorld(t)
	settings := filepath.Join(w.geminiHome(), ".gemini", "settings.json")
	write := func(path, content string) toolCall {
		return toolCall{Tools: []string{"write_file"}, Args: func(string) map[string]any {
			return map[string]any{"file_path": path, "content": content}
		}}
	}
	m := newModelServer(t,
		write(filepath.Join(w.project, ".git", "config"), "[core]\n"),
		runShellCall("echo '[e2e]' >> .git/config"),
		write(settings, "{}\n"),
		write(filepath.Join(w.project, ".git", "hooks", "pre-commit"), "#!/bin/sh\n"),
		write(w.manifest(), "git push --force\n"),
		write(filepath.Join(w.project, ".gemini", "settings.json"), "{}\n"))
	w.unchanged(w.protectedFiles(settings), m, func() string {
		return w.gemini(m, "--yolo")
	})
}
