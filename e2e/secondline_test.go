//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
)

// TestSecondLineCodexExecpolicy compiles the adversarial-2 policy into
// Codex rules and decides every plain row of the corpora (one command, no
// shell syntax) with Codex's own matcher, `codex execpolicy check`: it
// forbids at least half of the plain DENY rows, no row expected ALLOW or
// DEFAULT that the policy itself does not refuse, and agrees on every row
// with secondline's re-implementation (whose figures the unit tests and
// doctor give).
func TestSecondLineCodexExecpolicy(t *testing.T) {
	t.Parallel()
	codex := agentBin(t, "codex")
	rules := secondline.Rules(policy2Config(t), gate.NeverAllow())
	out := secondline.Codex(secondline.Compile(rules, programs.Builtin()))
	file := filepath.Join(t.TempDir(), "agent-shim.rules")
	if err := os.WriteFile(file, out.Text, 0o644); err != nil {
		t.Fatal(err)
	}
	denies := matcher.New()
	for _, r := range rules {
		if r.Decision == secondline.Deny {
			denies.Add(matcher.Deny, r.Text, matcher.Source{Category: "never_allow"})
		}
	}
	type row struct {
		where, line, expected string
		argv                  []string
		forbidden             bool
	}
	var rows []*row
	for _, c := range corporaRows(t) {
		argv, ok := secondline.Plain(c[1])
		if ok && c[2] != "ASK" {
			rows = append(rows, &row{where: c[0], line: c[1], expected: c[2], argv: argv})
		}
	}
	// Each check starts codex: four at a time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, r := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cmd := exec.Command(codex, append([]string{"execpolicy", "check", "--rules", file, "--"}, r.argv...)...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CODEX_HOME="+t.TempDir())
			data, err := cmd.Output()
			if err != nil {
				t.Errorf("%s: codex execpolicy check: %v", r.where, err)
				return
			}
			var res struct {
				Decision string `json:"decision"`
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Errorf("%s: reading %q: %v", r.where, data, err)
				return
			}
			r.forbidden = res.Decision == "forbidden"
		}()
	}
	wg.Wait()
	deny, forbidden := 0, 0
	for _, r := range rows {
		if (out.Decide(r.line) == secondline.Deny) != r.forbidden {
			t.Errorf("%s: %q: codex forbids it: %v; the re-implementation disagrees", r.where, r.line, r.forbidden)
		}
		switch {
		case r.expected == "DENY":
			deny++
			if r.forbidden {
				forbidden++
			}
		case r.forbidden && denies.Decide(r.line).Decision != matcher.Deny:
			t.Errorf("%s: %q: expected %s, forbidden by the Codex rules", r.where, r.line, r.expected)
		}
	}
	t.Logf("codex execpolicy check forbids %d of %d plain DENY rows (%.0f%%); %d plain rows checked", forbidden, deny, 100*float64(forbidden)/float64(max(deny, 1)), len(rows))
	if deny == 0 || 2*forbidden < deny {
		t.Errorf("the Codex rules forbid %d of %d plain DENY rows: want at least half", forbidden, deny)
	}
}

// policy2Config is the adversarial-2 policy (shared/corpus/README.md) as
// config.json grants.
func policy2Config(t *testing.T) *config.File {
	t.Helper()
	grants := func(lines ...string) []string {
		for i, l := range lines {
			lines[i] = "command(" + l + ")"
		}
		return lines
	}
	doc := map[string]any{"userSettings": map[string]any{"globalPermissionGrants": map[string]any{
		"allow": grants("git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build",
			"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
			"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"),
		"ask":  grants("git push", "git commit", "rm", "sed -i", "curl", "wget"),
		"deny": grants("git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"),
	}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse("config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// corporaRows returns the rows of the adversarial corpora of
// matcher/testdata as (where, command, expected).
func corporaRows(t *testing.T) [][3]string {
	t.Helper()
	files := []string{"../matcher/testdata/adversarial.tsv", "../matcher/testdata/adversarial-2.tsv", "../matcher/testdata/adversarial-3.tsv", "../matcher/testdata/adversarial-5.tsv"}
	var out [][3]string
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n")[1:] {
			f := strings.Split(line, "\t")
			if len(f) != 4 {
				t.Fatalf("%s:%d: want 4 fields", name, i+2)
			}
			cmd := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
			out = append(out, [3]string{filepath.Base(name) + ":" + strconv.Itoa(i+2), cmd, f[1]})
		}
	}
	return out
}
