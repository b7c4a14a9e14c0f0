package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRules prints each agent's second line from a config.json: the deny
// rule and the never-allow list are in it, the allow rule is not, and the
// same policy gives the same bytes.
func TestRules(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	data := `{"userSettings":{"globalPermissionGrants":{"allow":["command(git status)"],"ask":["command(curl)"],"deny":["command(git push --force)"]}}}`
	if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent string
		want  []string // substrings of the output
		not   []string
	}{
		{"codex", []string{`"push"`, `decision = "forbidden"`, `"mkfs"`}, []string{"status", "curl", `"allow"`}},
		{"claude-code", []string{`"Bash(git push --force)"`, `"Bash(mkfs *)"`, `"Bash(curl *)"`}, []string{"status", `"allow"`}},
		{"gemini-cli", []string{`decision = "deny"`, `push`, `mkfs`}, []string{"status", "curl", `"allow"`}},
	} {
		var out [2]string
		for i := range out {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"agent-shim", "rules", "--config", cfg, tc.agent}, strings.NewReader(""), &stdout, &stderr); code != exitOK {
				t.Fatalf("%s: exit %d: %s", tc.agent, code, stderr.String())
			}
			out[i] = stdout.String()
		}
		if out[0] != out[1] {
			t.Errorf("%s: two runs differ", tc.agent)
		}
		for _, w := range tc.want {
			if !strings.Contains(out[0], w) {
				t.Errorf("%s: output lacks %s", tc.agent, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out[0], w) {
				t.Errorf("%s: output has %s", tc.agent, w)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agent-shim", "rules", "--config", cfg, "cursor"}, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
		t.Errorf("unknown agent: exit %d, want %d", code, exitUsage)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"agent-shim", "rules", "--config", cfg, "--notes", "codex"}, strings.NewReader(""), &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "execpolicy matches literal words") {
		t.Errorf("--notes: exit %d, %s", code, stdout.String())
	}
}
