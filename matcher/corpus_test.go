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

// referencePolicy2 is the policy ../shared/corpus/README.md states for
// testdata/adversarial-2.tsv: the first corpus's, with more allowed.
func referencePolicy2() *Policy {
	p := referencePolicy()
	for _, l := range []string{"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file", "make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"} {
		p.Add(Allow, l, Source{Category: "read_only"})
	}
	return p
}

type corpusRow struct {
	line     int
	command  string
	expected Decision
	floor    bool
	why      string
	class    string
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
		rows = append(rows, corpusRow{line: i + 1, command: cmd, expected: d, floor: strings.Contains(f[2], "(floor"), why: f[2], class: f[3]})
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
	stricter := stricterOK(t, "testdata/adversarial.tsv")
	for _, row := range rows {
		res := p.Decide(row.command)
		got := res.Decision
		switch {
		case got.rank() < row.expected.rank():
			t.Errorf("line %d: %q: got %v, want %v (WEAKER: security bug; %s)\n%s", row.line, row.command, got, row.expected, row.why, explainText(res))
		case got != row.expected && !row.floor && !stricter[row.command]:
			t.Errorf("line %d: %q: got %v, want exactly %v (%s)\n%s", row.line, row.command, got, row.expected, row.why, explainText(res))
		}
	}
}

// stricterOK reads the rows of a corpus (testdata/NAME.stricter) whose
// exact expectation predates what is now known: a stricter verdict is
// accepted for them.
func stricterOK(t testing.TB, name string) map[string]bool {
	out := map[string]bool{}
	data, err := os.ReadFile(strings.TrimSuffix(name, ".tsv") + ".stricter")
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			cmd, _, _ := strings.Cut(line, "\t")
			out[strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(cmd)] = true
		}
	}
	return out
}

// pending reads the rows of a corpus that wait on package shellparse
// (testdata/NAME.pending). They are still decided and reported.
func pending(t testing.TB, name string) map[string]bool {
	data, err := os.ReadFile(strings.TrimSuffix(name, ".tsv") + ".pending")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			out[strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(line)] = true
		}
	}
	return out
}

// TestAdversarialCorpus2 holds the policy to the second corpus, as the
// first: never weaker, exact unless a floor. A row that fails names its
// class (the source column).
func TestAdversarialCorpus2(t *testing.T) {
	p := referencePolicy2()
	rows := readCorpus(t, "testdata/adversarial-2.tsv")
	shellparsePending := pending(t, "testdata/adversarial-2.tsv")
	for cmd := range shellparsePending {
		found := false
		for _, row := range rows {
			found = found || row.command == cmd
		}
		if !found {
			t.Errorf("pending row %q is not in the corpus", cmd)
		}
	}
	if len(rows) < 40 {
		t.Fatalf("corpus has only %d rows", len(rows))
	}
	var failed []string
	for _, row := range rows {
		res := p.Decide(row.command)
		got := res.Decision
		bad := ""
		switch {
		case got.rank() < row.expected.rank():
			bad = "WEAKER: security bug"
		case got != row.expected && !row.floor:
			bad = "stricter than expected"
		}
		pending := shellparsePending[row.command]
		switch {
		case bad != "" && pending:
			t.Logf("line %d: %q: got %v, want %v (pending on shellparse, %s)", row.line, row.command, got, row.expected, row.class)
		case bad != "":
			failed = append(failed, row.command)
			t.Errorf("line %d: %q: got %v, want %v (%s; %s; %s)\n%s", row.line, row.command, got, row.expected, bad, row.class, row.why, explainText(res))
		case pending:
			t.Logf("line %d: %q passes now: take it off shellparsePending", row.line, row.command)
		}
	}
	if len(failed) > 0 {
		t.Logf("%d rows fail", len(failed))
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
