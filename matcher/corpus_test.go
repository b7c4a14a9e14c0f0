package matcher

import (
	"os"
	"strings"
	"testing"
)

// referencePolicy is the policy ../shared/corpus/README.md states for
// testdata/adversarial.tsv.
func referencePolicy() *Policy {
	p := New()
	for _, l := range []string{"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build"} {
		p.Add(Allow, l, Source{Category: "read_only"})
	}
	for _, l := range []string{"git push", "git commit", "rm", "sed -i", "curl", "wget"} {
		p.Add(Ask, l, Source{Category: "external_changes"})
	}
	for _, l := range []string{"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"} {
		p.Add(Deny, l, Source{Category: "never_allow"})
	}
	return p
}

type corpusRow struct {
	line     int
	command  string
	expected Decision
	floor    bool
	why      string
}

func readCorpus(t testing.TB, name string) []corpusRow {
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rows []corpusRow
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if i == 0 {
			continue // header
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("%s:%d: want 4 tab-separated fields, got %d", name, i+1, len(f))
		}
		cmd := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		if seen[cmd] {
			t.Fatalf("%s:%d: duplicate command %q", name, i+1, cmd)
		}
		seen[cmd] = true
		d, err := ParseDecision(strings.ToLower(f[1]))
		if err != nil {
			t.Fatalf("%s:%d: %v", name, i+1, err)
		}
		rows = append(rows, corpusRow{line: i + 1, command: cmd, expected: d, floor: strings.Contains(f[2], "(floor)"), why: f[2]})
	}
	return rows
}

// TestAdversarialCorpus holds the policy to the corpus of real bypass
// attempts: never weaker than expected, and exact unless the row is a floor.
func TestAdversarialCorpus(t *testing.T) {
	p := referencePolicy()
	rows := readCorpus(t, "testdata/adversarial.tsv")
	if len(rows) < 100 {
		t.Fatalf("corpus has only %d rows", len(rows))
	}
	for _, row := range rows {
		res := p.Decide(row.command)
		got := res.Decision
		switch {
		case got.rank() < row.expected.rank():
			t.Errorf("line %d: %q: got %v, want %v (WEAKER: security bug; %s)\n%s", row.line, row.command, got, row.expected, row.why, explainText(res))
		case got != row.expected && !row.floor:
			t.Errorf("line %d: %q: got %v, want exactly %v (%s)\n%s", row.line, row.command, got, row.expected, row.why, explainText(res))
		}
	}
}

func explainText(r *Result) string {
	var sb strings.Builder
	if r.Err != nil {
		sb.WriteString("  parse error: " + r.Err.Error() + "\n")
	}
	for _, v := range r.Commands {
		sb.WriteString("  " + strings.Join(v.Argv, " ") + " → " + v.Decision.String() + ": " + v.Reason + "\n")
	}
	return sb.String()
}
