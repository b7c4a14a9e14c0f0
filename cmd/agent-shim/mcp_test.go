package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MCP tool calls are decided by their arguments, through the hook of
// every agent's protocol: a manifest's tool rules, written into config.json
// by agents-setup, deny a call by the argument that matters whatever the
// other arguments say, ask or allow by another, take a path argument as a
// path (cleaned, from the checkout), and leave a call no rule names to
// the level. explain --tool shows the rule that decided.
func TestMCPArgumentRules(t *testing.T) {
	cfg, proj, setupBin := appliedCheckout(t, map[string]string{
		"permissions/read_only.txt":        "git status\nmcp__github__create_issue(repo=me/*)\nmcp__fs__write_file(path=path:notes/**)\n",
		"permissions/external_changes.txt": "git push\nmcp__github__create_issue(repo=acme/*)\n",
		"permissions/never_allow.txt":      "git push --force\nmcp__github__create_issue(repo=acme/secret)\nmcp__github__delete_repo(*)\n",
	})
	calls := []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"mcp__github__create_issue", map[string]any{"repo": "me/tool", "title": "x"}, "allow"},
		{"mcp__github__create_issue", map[string]any{"repo": "acme/web", "title": "x"}, "ask"},
		{"mcp__github__create_issue", map[string]any{"repo": "acme/secret", "title": "repo=me/tool"}, "deny"},
		{"mcp__github__create_issue", map[string]any{"repo": []any{"acme/secret"}}, "ask"},
		{"mcp__github__delete_repo", map[string]any{"repo": "me/tool"}, "deny"},
		{"mcp__fs__write_file", map[string]any{"path": "notes/today.md", "content": "x"}, "allow"},
		{"mcp__fs__write_file", map[string]any{"path": "notes/../.git/hooks/pre-push", "content": "x"}, "default"},
		{"mcp__other__tool", map[string]any{"q": "x"}, "default"},
	}
	for _, agent := range []string{"claude-code", "codex", "gemini-cli"} {
		for _, c := range calls {
			code, out, stderr := protHookCall(t, agent, cfg, proj, c.tool, c.input)
			got := hookVerdict(t, agent, out)
			if agent == "codex" && got == "allow-or-default" && (c.want == "allow" || c.want == "default") {
				got = c.want // Codex's answer to both is no answer
			}
			if got != c.want {
				t.Errorf("%s: %s %v: %s (exit %d) %s%s, want %s", agent, c.tool, c.input, got, code, out, stderr, c.want)
			}
		}
	}
	// A malformed tool rule stops agents-setup with its file and line;
	// config.json is left as it was.
	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(proj, ".agents", "config", "permissions", "read_only.txt")
	if err := os.WriteFile(bad, []byte("git status\nmcp__github__create_issue(repo=me/* title)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setup := exec.Command(setupBin, "--config", cfg, "--root", proj, "--profile", "local-changes")
	setup.Env = os.Environ()
	if out, err := setup.CombinedOutput(); err == nil || !strings.Contains(string(out), "read_only.txt:2: tool rule mcp__github__create_issue") {
		t.Errorf("agents-setup with a malformed tool rule: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf("a malformed tool rule changed config.json")
	}
	code, out, stderr := cli("explain", "--config", cfg, "--cwd", proj, "--tool", "mcp__github__create_issue", `{"repo":"acme/secret","title":"x"}`)
	if code != 0 || !strings.Contains(out, "deny") || !strings.Contains(out, "mcp__github__create_issue(repo=acme/secret)") {
		t.Errorf("explain --tool: exit %d\n%s%s", code, out, stderr)
	}
}
