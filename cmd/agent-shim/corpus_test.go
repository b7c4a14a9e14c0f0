package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/config"
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
	corpus, err := os.ReadFile(filepath.Join("..", "..", "matcher", "testdata", "adversarial.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	rank := map[string]int{"allow": 0, "default": 1, "ask": 2, "deny": 3}
	rows := strings.Split(strings.TrimRight(string(corpus), "\n"), "\n")[1:]
	if len(rows) < 100 {
		t.Fatalf("corpus has %d rows", len(rows))
	}
	for _, row := range rows {
		f := strings.Split(row, "\t")
		line := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		want := strings.ToLower(f[1])
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"agent-shim", "explain", "--json", "--config", cfg, "--", line}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", line, code, stderr.String())
			continue
		}
		var res struct{ Verdict string }
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("%q: %v\n%s", line, err, stdout.String())
		}
		switch {
		case rank[res.Verdict] < rank[want]:
			t.Errorf("%q: explain says %s, want %s (weaker)", line, res.Verdict, want)
		case res.Verdict != want && !strings.Contains(f[2], "(floor"):
			t.Errorf("%q: explain says %s, want exactly %s", line, res.Verdict, want)
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
}
