package gate

import (
	"path/filepath"
	"testing"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/google/go-cmp/cmp"
)

// TestDecisionRecord: a decision carries the rule that decided, with its
// provenance, as data, and its log record says so; a floor, a tool
// pattern or a protected path decides without a rule and is the record's
// floor. No reason text is parsed.
func TestDecisionRecord(t *testing.T) {
	proj, outside := project(t)
	p := matcher.New()
	src := func(cat string, line int) matcher.Source {
		return matcher.Source{Category: cat, Overlay: "vendor/infra", File: "vendor/infra/.agents/config/permissions/" + cat + ".txt", Line: line}
	}
	p.Add(matcher.Allow, "echo", src("read_only", 5))
	p.Add(matcher.Allow, "git status", src("read_only", 2))
	p.Add(matcher.Ask, "git push", src("external_changes", 1))
	p.Add(matcher.Deny, "make deploy", src("never_allow", 3))
	tools, err := NewToolPolicy(proj, nil, []string{"bash:npm publish*"})
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Policy: p, Tools: tools, Level: LevelLocalChanges, Scope: NewScope(proj)})
	rule := func(text, list, cat string, line int) *decisionlog.Rule {
		return &decisionlog.Rule{Text: text, List: list, Category: cat, Overlay: "vendor/infra",
			File: "vendor/infra/.agents/config/permissions/" + cat + ".txt", Line: line}
	}
	never := &decisionlog.Rule{Text: "rm -r /", List: "deny", Category: "never_allow", Overlay: "builtin"}
	for _, tc := range []struct {
		in      string
		verdict string
		rule    *decisionlog.Rule
		floor   string
	}{
		{"git status", "allow", rule("git status", "allow", "read_only", 2), ""},
		{"git -C x push origin main", "ask", rule("git push", "ask", "external_changes", 1), ""},
		{"git status && make deploy", "deny", rule("make deploy", "deny", "never_allow", 3), ""},
		{"sudo rm -rf /", "deny", never, ""},
		{"echo x > " + filepath.Join(outside, "f"), "ask", rule("echo", "allow", "read_only", 5), "writes " + filepath.Join(outside, "f") + " (>)"},
		{"npm publish", "deny", nil, "tool pattern denies `npm publish`"},
		{"echo x > .git/config", "ask", nil, ""},
		{"frobnicate", "default", nil, "no rule matches"},
	} {
		t.Logf("input: %q", tc.in)
		d := g.DecideBash(tc.in)
		e := d.Record(decisionlog.Entry{Command: tc.in})
		floor := tc.floor
		if tc.rule == nil && floor == "" {
			floor = d.Reason // a protected path: the reason is the floor
		}
		if e.Verdict != tc.verdict || e.Floor != floor {
			t.Errorf("%s: %s, floor %q (%s); want %s, floor %q", tc.in, e.Verdict, e.Floor, d.Reason, tc.verdict, floor)
		}
		if diff := cmp.Diff(tc.rule, e.Rule); diff != "" {
			t.Errorf("%s: rule (-want +got):\n%s", tc.in, diff)
		}
	}
}
