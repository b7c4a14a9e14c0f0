package secondline

import (
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusRow is one row of an adversarial corpus.
type corpusRow struct {
	file     string
	line     int
	command  string
	expected string // ALLOW, ASK, DENY, DEFAULT
}

func (r corpusRow) String() string { return fmt.Sprintf("%s:%d: %q", r.file, r.line, r.command) }

// corpusFiles are the corpora the second line is measured on: the
// adversarial corpora of matcher/testdata (adversarial-5.tsv is a byte-for-byte
// copy of shared/corpus's, so that a clean clone has it).
func corpusFiles(testing.TB) []string {
	return []string{
		"../../matcher/testdata/adversarial.tsv",
		"../../matcher/testdata/adversarial-2.tsv",
		"../../matcher/testdata/adversarial-3.tsv",
		"../../matcher/testdata/adversarial-5.tsv",
	}
}

func readCorpora(t testing.TB) []corpusRow {
	t.Helper()
	var rows []corpusRow
	for _, name := range corpusFiles(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if i == 0 {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != 4 {
				t.Fatalf("%s:%d: want 4 tab-separated fields, got %d", name, i+1, len(f))
			}
			cmd := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
			rows = append(rows, corpusRow{file: filepath.Base(name), line: i + 1, command: cmd, expected: f[1]})
		}
	}
	if len(rows) < 400 {
		t.Fatalf("corpora hold only %d rows", len(rows))
	}
	return rows
}

// coverage is what one agent's second line does with the corpora.
type coverage struct {
	plainDeny, plainDenied int
	refused                []corpusRow // rows expected ALLOW or DEFAULT that it refuses
	denyAll, deniedAll     int         // every DENY row, plain or not
}

func (c coverage) String() string {
	return fmt.Sprintf("refuses %d of %d plain DENY rows (%.0f%%), %d of %d DENY rows in all; refuses %d rows expected ALLOW or DEFAULT",
		c.plainDenied, c.plainDeny, 100*float64(c.plainDenied)/float64(max(c.plainDeny, 1)), c.deniedAll, c.denyAll, len(c.refused))
}

// policyDenies is the policy's own verdict on a line: whether the
// matcher, with the rules the second line is compiled from (the deny list
// and the never-allow list), refuses it. A row expected ALLOW or DEFAULT
// in a corpus written before the never-allow list (git clean -fd) may be
// refused by both.
func policyDenies(t testing.TB, rules []Rule) func(string) bool {
	m := matcher.New()
	for _, r := range rules {
		if r.Decision == Deny {
			m.Add(matcher.Deny, r.Text, matcher.Source{Category: "never_allow"})
		}
	}
	return func(line string) bool { return m.Decide(line).Decision == matcher.Deny }
}

// measure decides every row with decide.
func measure(rows []corpusRow, decide func(line string) Decision, denies func(string) bool) coverage {
	var c coverage
	for _, r := range rows {
		d := decide(r.command)
		_, plain := Plain(r.command)
		switch r.expected {
		case "DENY":
			c.denyAll++
			if d == Deny {
				c.deniedAll++
			}
			if plain {
				c.plainDeny++
				if d == Deny {
					c.plainDenied++
				}
			}
		case "ALLOW", "DEFAULT":
			if d == Deny && !denies(r.command) {
				c.refused = append(c.refused, r)
			}
		}
	}
	return c
}

// compilers are the agents' compilers (agents.Agent.Rules.Compile, which
// this package cannot import).
var compilers = []struct {
	Name    string
	Compile func(*Policy) Output
}{{"claude-code", Claude}, {"codex", Codex}, {"gemini-cli", Gemini}}

// TestCoverage compiles the adversarial-2 policy for each agent and
// decides the corpora with the agent's engine as re-implemented here:
// the second line refuses no row the policy allows or leaves to the
// agent, and refuses at least the share of the plain DENY rows recorded
// in Figures (the real engines are held to the re-implementations by the
// e2e tests).
func TestCoverage(t *testing.T) {
	rows := readCorpora(t)
	rules := Rules(policy2(t), neverAllow)
	p := Compile(rules, programs.Builtin())
	for _, agent := range compilers {
		out := agent.Compile(p)
		c := measure(rows, out.Decide, policyDenies(t, rules))
		t.Logf("%s: %v", agent.Name, c)
		for _, r := range c.refused {
			t.Errorf("%s refuses %v, expected ALLOW or DEFAULT", agent.Name, r)
		}
		i := slices.IndexFunc(Figures, func(f Figure) bool { return f.Agent == agent.Name })
		if i < 0 {
			t.Errorf("%s: no figure recorded", agent.Name)
			continue
		}
		if f := Figures[i]; f.PlainDeny != c.plainDeny || f.PlainDenied != c.plainDenied || f.Refused != len(c.refused) {
			t.Errorf("%s: Figures say %d of %d plain DENY rows refused, %d allowed rows refused; measured %d of %d, %d",
				agent.Name, f.PlainDenied, f.PlainDeny, f.Refused, c.plainDenied, c.plainDeny, len(c.refused))
		}
	}
}
