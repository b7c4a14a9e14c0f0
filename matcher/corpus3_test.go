package matcher_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/matcher"
)

// TestAdversarialCorpus3 decides testdata/adversarial-3.tsv as its README
// (../shared/corpus/README.md) says: the adversarial-2 policy, at the
// default level (local-changes), with the working directory inside a git
// checkout, through the gate that every front end uses (the matcher's
// decision with the scope, the protected paths and the never-allow list).
// Never weaker than expected; exact unless the row is a floor.
func TestAdversarialCorpus3(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{"HOME": "home", "XDG_CONFIG_HOME": "xdg/config", "XDG_STATE_HOME": "xdg/state",
		"XDG_CACHE_HOME": "xdg/cache", "XDG_DATA_HOME": "xdg/data"} {
		t.Setenv(k, filepath.Join(dir, v))
	}
	for _, k := range []string{"GEMINI_CONFIG_DIR", "GEMINI_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		t.Setenv(k, "")
	}
	ck := filepath.Join(dir, "ck")
	for _, d := range []string{".git/hooks", ".agents/config/permissions", "cmd"} {
		if err := os.MkdirAll(filepath.Join(ck, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := matcher.New()
	for d, lines := range map[matcher.Decision][]string{
		matcher.Allow: {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build",
			"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
			"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"},
		matcher.Ask:  {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		matcher.Deny: {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	} {
		p.AddLines(d, lines, matcher.Source{File: d.String() + ".txt"})
	}
	p.SetHome(filepath.Join(dir, "home"))
	g := gate.New(gate.Options{Level: gate.LevelLocalChanges, Policy: p, Scope: gate.NewScope(ck), Dir: ck})

	data, err := os.ReadFile("testdata/adversarial-3.tsv")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(data), "\n"), "\n")[1:]
	if len(rows) < 140 {
		t.Fatalf("corpus has only %d rows", len(rows))
	}
	seen := map[string]bool{}
	failed := 0
	for i, row := range rows {
		f := strings.Split(row, "\t")
		if len(f) != 4 {
			t.Fatalf("line %d: want 4 tab-separated fields, got %d", i+2, len(f))
		}
		line := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		if seen[line] {
			t.Fatalf("line %d: duplicate command %q", i+2, line)
		}
		seen[line] = true
		want, err := matcher.ParseDecision(strings.ToLower(f[1]))
		if err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		x := g.Explain(line)
		got := x.Decision.Verdict
		bad := ""
		switch {
		case gate.Stronger(want, got):
			bad = "WEAKER: security bug"
		case got != want && !strings.Contains(f[2], "(floor"):
			bad = "stricter than expected"
		}
		if bad != "" {
			failed++
			var sb strings.Builder
			for _, c := range x.Commands {
				sb.WriteString("  " + strings.Join(c.Argv, " ") + " → " + c.Verdict.String() + ": " + c.Reason + "\n")
			}
			t.Errorf("line %d: %q: got %v, want %v (%s; %s; %s)\n%s", i+2, line, got, want, bad, f[3], f[2], sb.String())
		}
	}
	if failed > 0 {
		t.Logf("%d of %d rows fail", failed, len(rows))
	}
}
