package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// policy2 is the reference policy of adversarial-2.tsv and adversarial-3.tsv
// (../shared/corpus/README.md), as manifests by category.
func policy2() map[string][]string {
	return map[string][]string{
		"read_only": {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build",
			"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
			"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"},
		"external_changes": {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		"never_allow":      {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	}
}

// corpusCheckout makes a git checkout under dir holding the reference
// policy's manifests, and returns its root.
func corpusCheckout(t *testing.T, dir string) string {
	t.Helper()
	ck := filepath.Join(dir, "ck")
	perms := filepath.Join(ck, ".agents", "config", "permissions")
	for _, d := range []string{perms, filepath.Join(ck, ".git", "hooks"), filepath.Join(ck, "cmd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ck, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ck, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for cat, lines := range policy2() {
		if err := os.WriteFile(filepath.Join(perms, cat+".txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ck
}

// TestCorpus3 decides adversarial-3.tsv as its README says: the
// adversarial-2 policy, written by agents-setup (local-changes), with the
// working directory inside a git checkout, through explain and through
// Claude Code's hook. Every row must be met: never weaker, exact unless a
// floor.
func TestCorpus3(t *testing.T) {
	dir, cfg := testEnv(t, "")
	ck := corpusCheckout(t, dir)
	setup := buildBinary(t, dir, "agents-setup")
	cmd := exec.Command(setup, "--root", ck, "--config", cfg, "-p", "local-changes")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("agents-setup: %v\n%s", err, out)
	}
	checkCorpus3(t, cfg, ck, "adversarial-3.tsv", 140)
	checkCorpus3(t, cfg, ck, "adversarial-5.tsv", 110)
}

// TestCorpus3Grants is TestCorpus3 with the policy as plain command(…)
// grants written by hand, no agents-setup: the rows are decided by the
// shim's own reading of the grants.
func TestCorpus3Grants(t *testing.T) {
	dir, cfg := testEnv(t, "")
	ck := corpusCheckout(t, dir)
	lists := map[string][]string{}
	for cat, lines := range policy2() {
		list := map[string]string{"read_only": "allow", "external_changes": "ask", "never_allow": "deny"}[cat]
		for _, l := range lines {
			lists[list] = append(lists[list], "command("+l+")")
		}
	}
	data, err := json.Marshal(map[string]any{"userSettings": map[string]any{"globalPermissionGrants": lists}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	checkCorpus3(t, cfg, ck, "adversarial-3.tsv", 140)
	checkCorpus3(t, cfg, ck, "adversarial-5.tsv", 110)
}

// tmpNote is the corpus README's "(tmp: V …)": the row's only concern is
// a write in the temp directory, and either ASK or V is met.
var tmpNote = regexp.MustCompile(`\(tmp: (ALLOW|DEFAULT|ASK|DENY)\b`)

// checkCorpus3 decides every row of a corpus of matcher/testdata (of at
// least minRows rows) with explain --json and with the Claude Code hook,
// both with cwd as the agent's working directory.
func checkCorpus3(t *testing.T, cfg, cwd, name string, minRows int) {
	t.Helper()
	corpus, err := os.ReadFile(filepath.Join("..", "..", "matcher", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	// The rows the matcher alone leaves to the gate (matcher's .pending
	// file) are decided here, through the gate: every row holds.
	rank := map[string]int{"allow": 0, "default": 1, "ask": 2, "deny": 3}
	hookVerdict := map[string]string{"": "default", "allow": "allow", "ask": "ask", "deny": "deny"}
	// Rows listed in the matcher's NAME.stricter are decided more strictly
	// than the corpus expects, correctly (each line says why): a stricter
	// verdict is met for them, never a weaker one.
	stricter := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join("..", "..", "matcher", "testdata", strings.TrimSuffix(name, ".tsv")+".stricter")); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if cmd, _, _ := strings.Cut(l, "\t"); cmd != "" && !strings.HasPrefix(l, "#") {
				stricter[cmd] = true
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(corpus), "\n"), "\n")[1:]
	if len(rows) < minRows {
		t.Fatalf("%s has %d rows", name, len(rows))
	}
	failed := 0
	for i, row := range rows {
		f := strings.Split(row, "\t")
		line := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		want, floor := strings.ToLower(f[1]), strings.Contains(f[2], "(floor")
		tmp := ""
		if m := tmpNote.FindStringSubmatch(f[2]); m != nil {
			tmp = strings.ToLower(m[1])
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--cwd", cwd, "--", line}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Errorf("%s:%d: %q: explain exit %d: %s", name, i+2, line, code, stderr.String())
			continue
		}
		var res struct {
			Verdict  string
			Reason   string
			Commands []struct {
				Argv            []string
				Verdict, Reason string
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("%q: %v\n%s", line, err, stdout.String())
		}
		in, err := json.Marshal(map[string]any{"session_id": "corpus", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
			"tool_input": map[string]string{"command": line}, "tool_use_id": fmt.Sprint("t", i)})
		if err != nil {
			t.Fatal(err)
		}
		stdout.Reset()
		code = run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, bytes.NewReader(in), &stdout, &stderr)
		var out struct {
			HookSpecificOutput struct{ PermissionDecision string }
		}
		if code != 0 || (stdout.Len() > 0 && json.Unmarshal(stdout.Bytes(), &out) != nil) {
			t.Errorf("%s:%d: %q: hook exit %d: %s%s", name, i+2, line, code, stdout.String(), stderr.String())
			continue
		}
		hook := hookVerdict[out.HookSpecificOutput.PermissionDecision]
		for _, got := range []struct{ via, verdict string }{{"explain", res.Verdict}, {"hook", hook}} {
			bad := ""
			switch {
			case tmp != "" && (got.verdict == "ask" || got.verdict == tmp):
			case rank[got.verdict] < rank[want]:
				bad = "weaker"
			case got.verdict != want && !floor && !stricter[f[0]]:
				bad = "stricter"
			}
			if bad != "" {
				failed++
				t.Errorf("%s:%d: %q (%s): %s says %s, want %s (%s): %s", name, i+2, line, f[3], got.via, got.verdict, want, bad, res.Reason)
			}
		}
	}
	if failed > 0 {
		t.Logf("%d of %d decisions fail", failed, 2*len(rows))
	}
}
