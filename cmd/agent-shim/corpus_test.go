package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
)

// TestExplainCorpus runs the adversarial corpus through the whole explain
// path, read, decided and printed as JSON, for the two ways a config.json
// can hold the reference policy: managed rules (as agents-setup writes
// them, each grant a regex that matches nothing useful, so that only the
// rule's line can decide) and plain command(…) grants written by hand.
func TestExplainCorpus(t *testing.T) {
	for _, managed := range []bool{true, false} {
		name := "managed"
		if !managed {
			name = "grants"
		}
		t.Run(name, func(t *testing.T) { explainCorpus(t, managed) })
	}
}

func explainCorpus(t *testing.T, managed bool) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	lists := map[string][]string{
		"allow": {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build"},
		"ask":   {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		"deny":  {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	}
	var g config.Grants
	var rules []config.Rule
	n := 0
	for _, list := range []string{"allow", "ask", "deny"} {
		for _, line := range lists[list] {
			n++
			grant := "command(" + line + ")"
			if managed {
				grant = "command(regex:^managed-rule-" + strings.Repeat("x", n) + "$)"
			}
			switch list {
			case "allow":
				g.Allow = append(g.Allow, grant)
			case "ask":
				g.Ask = append(g.Ask, grant)
			case "deny":
				g.Deny = append(g.Deny, grant)
			}
			if !managed {
				continue
			}
			rules = append(rules, config.Rule{Line: line, Category: list, Source: config.Source{Overlay: ".", File: list + ".txt", Line: n}, Grants: []string{grant}})
		}
	}
	data, err := json.Marshal(map[string]any{
		"userSettings": map[string]any{"globalPermissionGrants": g},
		"agentShim":    map[string]any{"version": 1, "rules": rules},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, cfg)
}

// checkCorpus decides every row of the adversarial corpus with explain
// --json under cfg: never weaker than expected, exact unless a floor.
func checkCorpus(t *testing.T, cfg string) {
	t.Helper()
	checkCorpusFile(t, cfg, "adversarial.tsv", 100)
}

// checkCorpusFile is checkCorpus for one corpus of matcher/testdata,
// through explain --json and through Claude Code's hook. Rows listed in
// its .pending file (waiting on package shellparse) are reported without
// failing.
func checkCorpusFile(t *testing.T, cfg, name string, minRows int) {
	t.Helper()
	dir := filepath.Join("..", "..", "matcher", "testdata")
	corpus, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".tsv")+".pending")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				pending[strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(l)] = true
			}
		}
	}
	stricter := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(name, ".tsv")+".stricter")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				cmd, _, _ := strings.Cut(l, "\t")
				stricter[strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(cmd)] = true
			}
		}
	}
	rank := map[string]int{"allow": 0, "default": 1, "ask": 2, "deny": 3}
	rows := strings.Split(strings.TrimRight(string(corpus), "\n"), "\n")[1:]
	// Outside any checkout: the scope is empty, so that a write is a
	// write wherever the test runs (inside a checkout, the level allows
	// writes in the scope).
	cwd := t.TempDir()
	if len(rows) < minRows {
		t.Fatalf("corpus has %d rows", len(rows))
	}
	for i, row := range rows {
		f := strings.Split(row, "\t")
		line := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		want := strings.ToLower(f[1])
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--cwd", cwd, "--", line}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", line, code, stderr.String())
			continue
		}
		var res struct{ Verdict, NeverAllow string }
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("%q: %v\n%s", line, err, stdout.String())
		}
		errorf := t.Errorf
		if pending[line] {
			errorf = t.Logf // waits on package shellparse
		}
		in, err := json.Marshal(map[string]any{"session_id": "corpus", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]string{"command": line}, "tool_use_id": fmt.Sprint("t", i)})
		if err != nil {
			t.Fatal(err)
		}
		stdout.Reset()
		stderr.Reset()
		code = run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, bytes.NewReader(in), &stdout, &stderr)
		var out struct {
			HookSpecificOutput struct{ PermissionDecision string }
		}
		if code != 0 || (stdout.Len() > 0 && json.Unmarshal(stdout.Bytes(), &out) != nil) {
			t.Errorf("%s: %q: hook exit %d: %s%s", name, line, code, stdout.String(), stderr.String())
			continue
		}
		hook := map[string]string{"": "default", "allow": "allow", "ask": "ask", "deny": "deny"}[out.HookSpecificOutput.PermissionDecision]
		for _, got := range []struct{ via, verdict string }{{"explain", res.Verdict}, {"hook", hook}} {
			switch {
			case rank[got.verdict] < rank[want]:
				errorf("%s: %q: %s says %s, want %s (weaker)", name, line, got.via, got.verdict, want)
			case got.verdict != want && !strings.Contains(f[2], "(floor") && !stricter[line] && res.NeverAllow == "":
				// Hook and shell mode add the built-in never-allow list.
				errorf("%s: %q: %s says %s, want exactly %s", name, line, got.via, got.verdict, want)
			}
		}
	}
}

// TestCorpusThroughAgentsSetup is the whole flow: the reference policy as
// manifests in a checkout, agents-setup writing config.json from them
// (read_only allowed, external_changes asked, never_allow denied under
// local-changes), and explain deciding the corpus under that file.
func TestCorpusThroughAgentsSetup(t *testing.T) {
	dir, cfg := testEnv(t, "")
	setup := buildBinary(t, dir, "agents-setup")
	ck := filepath.Join(dir, "ck")
	manifests := map[string][]string{
		"read_only":        {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build"},
		"external_changes": {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		"never_allow":      {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	}
	perms := filepath.Join(ck, ".agents", "config", "permissions")
	if err := os.MkdirAll(perms, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ck, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for cat, lines := range manifests {
		if err := os.WriteFile(filepath.Join(perms, cat+".txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setup, "--root", ck, "--config", cfg, "-p", "local-changes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agents-setup: %v\n%s", err, out)
	}
	checkCorpus(t, cfg)

	// The second corpus's policy (matcher/testdata/adversarial-2.tsv,
	// ../shared/corpus/README.md) allows more, read-only.
	more := []string{"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
		"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"}
	manifests["read_only"] = append(manifests["read_only"], more...)
	if err := os.WriteFile(filepath.Join(perms, "read_only.txt"), []byte(strings.Join(manifests["read_only"], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(setup, "--root", ck, "--config", cfg, "-p", "local-changes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agents-setup: %v\n%s", err, out)
	}
	checkCorpusFile(t, cfg, "adversarial-2.tsv", 40)
}

// TestExplainFact: explain names the program fact that made a command
// stricter, in text and JSON.
func TestExplainFact(t *testing.T) {
	_, cfg := testEnv(t, `{"userSettings":{"globalPermissionGrants":{"allow":["command(git ls-remote)","command(tar -tf)"],"deny":["command(rm -rf /)"]}}}`)
	for _, tc := range []struct{ line, verdict, fact string }{
		{"git ls-remote --upload-pack='rm -rf /' .", "deny", "[git ls-remote] exec -u --upload-pack"},
		{"tar -tf x.tar --index-file=/tmp/i", "ask", "[tar] write --index-file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"agent-shim", "explain", "--config", cfg, "--", tc.line}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.line, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "fact: ") || !strings.Contains(stdout.String(), tc.fact) {
			t.Errorf("%q: explain does not name the fact %q:\n%s", tc.line, tc.fact, stdout.String())
		}
		stdout.Reset()
		if code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--", tc.line}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.line, code, stderr.String())
		}
		var res struct {
			Verdict  string
			Commands []struct{ Fact string }
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Verdict != tc.verdict || len(res.Commands) == 0 || !strings.Contains(res.Commands[0].Fact, tc.fact) {
			t.Errorf("%q: explain --json = %s", tc.line, stdout.String())
		}
	}
}
