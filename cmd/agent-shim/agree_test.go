package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExplainAgreesWithHook: explain and the hook make one decision. Every
// row of the corpora, and lines that tool patterns, the level and the
// scope decide, are explained and answered as a Claude Code hook call
// under several config.json files, inside and outside a checkout; the
// verdicts must be the same.
func TestExplainAgreesWithHook(t *testing.T) {
	dir, cfg := testEnv(t, "")
	_, proj := checkout(t, dir)
	outside := filepath.Join(dir, "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	lines := corpusLines(t)
	extra := []string{
		"make all", "make install", "npm test", "echo x > notes.txt", "echo x > /etc/motd",
		"echo x >> .git/config", "cat ~/.bashrc", "git push origin main", "rm -rf build",
	}
	grants := `"userSettings": {"globalPermissionGrants": {
	    "allow": ["command(git status)", "command(ls)", "command(cat)", "command(echo)", "command(go test)"],
	    "ask": ["command(git push)", "command(rm)", "command(curl)"],
	    "deny": ["command(git push --force)", "command(rm -rf /)"]}}`
	// The corpora under the two ends (ask at local-changes, yolo at full
	// access); the lines tool patterns, levels and the scope decide under
	// every config.
	corpusConfigs := map[string]bool{"ask, local-changes": true, "yolo, full-access": true}
	configs := map[string]string{
		"ask, local-changes": `{` + grants + `}`,
		"allow, read-only, tools": `{` + grants + `, "agentShim": {"version": 1, "mode": "allow", "profile": "read-only",
		    "tools": {"allow": ["bash:make *"], "deny": ["bash:make install", "bash:npm **"]}}}`,
		"yolo, full-access": `{` + grants + `, "agentShim": {"version": 1, "mode": "yolo", "profile": "full-access"}}`,
		"ask, external-changes, scope": `{` + grants + `, "agentShim": {"version": 1, "profile": "external-changes",
		    "pathScope": {"allow": ["/etc/..."]}}}`,
	}
	t.Setenv("AGENT_SHIM_SESSION", "prot") // explain's session is the hook's
	n := 0
	for name, content := range configs {
		if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		todo := extra
		if corpusConfigs[name] {
			todo = append(slices.Clip(lines), extra...)
		}
		for _, cwd := range []string{proj, outside} {
			for _, line := range todo {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--cwd", cwd, "-"},
					strings.NewReader(line), &stdout, &stderr)
				if code != 0 {
					t.Fatalf("%s: explain %q: exit %d: %s", name, line, code, stderr.String())
				}
				var x struct{ Verdict, Reason string }
				if err := json.Unmarshal(stdout.Bytes(), &x); err != nil {
					t.Fatal(err)
				}
				code, out, errOut := protHookCall(t, "claude-code", cfg, cwd, "Bash", map[string]any{"command": line})
				if code != 0 {
					t.Fatalf("%s: hook %q: exit %d: %s", name, line, code, errOut)
				}
				if got := hookVerdict(t, "claude-code", out); got != x.Verdict {
					t.Errorf("%s, cwd %s: %q: explain says %s (%s), the hook %s", name, filepath.Base(cwd), line, x.Verdict, x.Reason, got)
				}
				n++
			}
		}
	}
	t.Logf("%d lines agree", n)
}
