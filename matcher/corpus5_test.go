package matcher_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/matcher"
)

// policy2 is the reference policy of adversarial-2.tsv and of the corpora
// decided inside a checkout (../shared/corpus/README.md), by verdict.
func policy2() map[matcher.Decision][]string {
	return map[matcher.Decision][]string{
		matcher.Allow: {"git status", "git diff", "git log", "ls", "cat", "grep", "rg", "echo", "go test", "go build",
			"git grep", "git ls-remote", "git show", "tar -tf", "less", "sort", "find", "date", "file",
			"make", "npm test", "cargo test", "go vet", "go list", "Rscript", "jiri runp", "head", "watch"},
		matcher.Ask:  {"git push", "git commit", "rm", "sed -i", "curl", "wget"},
		matcher.Deny: {"git push --force", "git push -f", "git push --force-with-lease", "rm -rf /", "git reset --hard", "git clean -fdx"},
	}
}

// checkoutGate returns the gate the corpora decided inside a checkout are
// decided with, as their README says: the adversarial-2 policy, at the
// default level (local-changes), with the working directory inside a git
// checkout, through the gate every front end uses (the matcher's decision
// with the scope, the protected paths and the never-allow list). HOME and
// the XDG directories are the test's own.
func checkoutGate(t testing.TB) *gate.Gate {
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
	for d, lines := range policy2() {
		p.AddLines(d, lines, matcher.Source{File: d.String() + ".txt"})
	}
	p.SetHome(filepath.Join(dir, "home"))
	return gate.New(gate.Options{Level: gate.LevelLocalChanges, Policy: p, Scope: gate.NewScope(ck), Dir: ck})
}

// gateRow is one row of a corpus decided through the gate.
type gateRow struct {
	line                     int
	command                  string
	want                     matcher.Decision
	why, class               string
	floor                    bool
	tmp                      bool // (tmp: …): the line's only concern is a write in the temp directory
	stricter                 bool // listed in NAME.stricter: a stricter verdict is accepted
	tmpWithout               matcher.Decision
	harmless, risky, control bool
}

// tmpNote is the README's "(tmp: V …)": either ASK or V is accepted.
var tmpNote = regexp.MustCompile(`\(tmp: (ALLOW|DEFAULT|ASK|DENY)\b`)

// readGateCorpus reads a corpus of testdata: adversarial-N.tsv (command,
// expected, why, source) or traffic.tsv (cmd, expected, source, why).
func readGateCorpus(t testing.TB, name string) []gateRow {
	return readGateCorpusAt(t, filepath.Join("testdata", name))
}

// readGateCorpusAt is readGateCorpus for a file by its path.
func readGateCorpusAt(t testing.TB, file string) []gateRow {
	name := filepath.Base(file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	header := strings.Split(lines[0], "\t")
	traffic := len(header) == 4 && header[0] == "cmd" && header[3] == "why"
	seen := map[string]bool{}
	stricter := map[string]bool{}
	if data, err := os.ReadFile(strings.TrimSuffix(file, ".tsv") + ".stricter"); err == nil {
		// Rows whose exact expectation predates what is now known: each
		// line the command as spelled in the corpus, a tab, why.
		for _, l := range strings.Split(string(data), "\n") {
			if cmd, _, _ := strings.Cut(l, "\t"); cmd != "" && !strings.HasPrefix(l, "#") {
				stricter[strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(cmd)] = true
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var rows []gateRow
	for i, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("%s:%d: want 4 tab-separated fields, got %d", name, i+2, len(f))
		}
		cmd := strings.NewReplacer("␤", "\n", "⇥", "\t").Replace(f[0])
		if seen[cmd] {
			t.Fatalf("%s:%d: duplicate command %q", name, i+2, cmd)
		}
		seen[cmd] = true
		want, err := matcher.ParseDecision(strings.ToLower(f[1]))
		if err != nil {
			t.Fatalf("%s:%d: %v", name, i+2, err)
		}
		why, class := f[2], f[3]
		if traffic {
			why, class = f[3], f[2]
		}
		r := gateRow{line: i + 2, command: cmd, want: want, why: why, class: class, floor: strings.Contains(why, "(floor"), stricter: stricter[cmd]}
		if m := tmpNote.FindStringSubmatch(why); m != nil {
			r.tmp = true
			r.tmpWithout, _ = matcher.ParseDecision(strings.ToLower(m[1]))
		}
		r.harmless = want == matcher.Allow || want == matcher.Default
		r.risky = !r.harmless
		r.control = class == "control"
		rows = append(rows, r)
	}
	return rows
}

// holds reports how the gate's verdict got compares with a row: "" when it
// is met, else "weaker" or "stricter".
func (r gateRow) holds(got matcher.Decision) string {
	switch {
	case r.tmp && (got == matcher.Ask || got == r.tmpWithout):
		return ""
	case gate.Stronger(r.want, got):
		return "weaker"
	case got != r.want && !r.floor && !r.stricter:
		return "stricter"
	}
	return ""
}

func explainGate(x gate.Explanation) string {
	var sb strings.Builder
	for _, c := range x.Commands {
		sb.WriteString("  " + strings.Join(c.Argv, " ") + " → " + c.Verdict.String() + ": " + c.Reason + "\n")
	}
	return sb.String()
}

// TestAdversarialCorpus5 decides testdata/adversarial-5.tsv as
// adversarial-3.tsv is decided: every row holds, never weaker than
// expected and exact unless a floor (a (tmp: …) row may also ask).
func TestAdversarialCorpus5(t *testing.T) {
	g := checkoutGate(t)
	rows := readGateCorpus(t, "adversarial-5.tsv")
	if len(rows) < 110 {
		t.Fatalf("corpus has only %d rows", len(rows))
	}
	failed := 0
	for _, r := range rows {
		x := g.Explain(r.command)
		if bad := r.holds(x.Decision.Verdict); bad != "" {
			failed++
			t.Errorf("line %d: %q: got %v, want %v (%s; %s; %s)\n%s", r.line, r.command, x.Decision.Verdict, r.want, bad, r.class, r.why, explainGate(x))
		}
	}
	if failed > 0 {
		t.Logf("%d of %d rows fail", failed, len(rows))
	}
}

// maxTrafficFriction is how many harmless lines of testdata/traffic.tsv the
// gate asks about or refuses (of 146), and maxTrafficUndecided how many
// risky lines it leaves to the agent (of 45): the figures that must not
// rise. Both were 3 and 23 before the engine knew what reaches other
// machines and read what a line writes out and runs.
const (
	maxTrafficFriction  = 0
	maxTrafficUndecided = 0
)

// TestTrafficFriction decides the real agent lines of testdata/traffic.tsv
// inside a checkout with the adversarial-2 policy (../shared/corpus/README.md)
// and holds the measures: friction (harmless lines asked about or
// refused) at most maxTrafficFriction, risky lines left to the agent
// (DEFAULT) at most maxTrafficUndecided, and no risky line allowed.
func TestTrafficFriction(t *testing.T) {
	g := checkoutGate(t)
	rows := readGateCorpus(t, "traffic.tsv")
	if len(rows) < 190 {
		t.Fatalf("traffic has only %d rows", len(rows))
	}
	harmless, friction, risky, undecided := 0, 0, 0, 0
	for _, r := range rows {
		x := g.Explain(r.command)
		got := x.Decision.Verdict
		switch {
		case r.harmless:
			harmless++
			if got == matcher.Ask || got == matcher.Deny {
				friction++
				t.Logf("friction: line %d: %q: %v (%s)", r.line, r.command, got, x.Decision.Reason)
			}
		case r.tmp && (got == r.tmpWithout || got == matcher.Ask):
			// The temp directory's writes are the product's call.
		default:
			risky++
			if got == matcher.Allow {
				t.Errorf("line %d: %q: a risky line is allowed (want %v: %s)\n%s", r.line, r.command, r.want, r.why, explainGate(x))
			}
			if got == matcher.Default {
				undecided++
			}
		}
	}
	t.Logf("friction %d of %d harmless lines; %d of %d risky lines left to the agent", friction, harmless, undecided, risky)
	if friction > maxTrafficFriction {
		t.Errorf("friction rose: %d harmless lines asked about or refused, at most %d before", friction, maxTrafficFriction)
	}
	if undecided > maxTrafficUndecided {
		t.Errorf("undecided rose: %d risky lines left to the agent, at most %d before", undecided, maxTrafficUndecided)
	}
}
