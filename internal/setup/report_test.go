package setup

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agent-shim/agent-shim/internal/config"
)

func TestRuleLines(t *testing.T) {
	long := "command(regex:^" + strings.Repeat(`(?:[^\x00-\x20]|é)`, 40) + "$)"
	rules := []config.Rule{
		{Line: "git status", Category: "read_only", Source: config.Source{Overlay: ".", File: ".agents/config/permissions/read_only.txt", Line: 195}, Grants: []string{"g1"}},
		{Line: "git push --force --no-verify", Category: "never_allow", Source: config.Source{Overlay: "builtin", File: "never_allow.txt", Line: 3}, Grants: []string{"p1", "p2"}},
		{Line: "make " + strings.Repeat("x", 400), Category: "read_only", Source: config.Source{Overlay: "ad-hoc"}, Grants: []string{"m1"}},
		{Line: "unlisted", Grants: []string{"u1"}},
	}
	tests := []struct {
		sign, list string
		grants     []string
		want       []string
		nRules     int
	}{
		{"+", "allow", []string{"g1"}, []string{"  + allow  git status                     (.agents/config/permissions/read_only.txt:195)"}, 1},
		{"-", "deny", []string{"p2", "p1"}, []string{"  - deny   git push --force --no-verify   (built-in never_allow.txt:3; 2 grants)"}, 1},
		{"", "ask", []string{long}, []string{"  ask    " + long[:300-len("  ask    ")-len("   (grant, no rule)")-len("…")] + "…   (grant, no rule)"}, 0},
		{"+", "allow", nil, nil, 0},
	}
	for _, tc := range tests {
		got, n := ruleLines(tc.sign, tc.list, tc.grants, rules)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || n != tc.nRules {
			t.Errorf("ruleLines(%q, %q, %q) =\n%q, %d\nwant\n%q, %d", tc.sign, tc.list, tc.grants, got, n, tc.want, tc.nRules)
		}
	}
	got, _ := ruleLines("+", "allow", []string{"m1", long + "é"}, rules)
	for _, l := range got {
		if len(l) > maxLine || !utf8.ValidString(l) {
			t.Errorf("line of %d bytes (valid UTF-8: %v): %q", len(l), utf8.ValidString(l), l)
		}
	}
	if !strings.HasSuffix(got[0], "…   (command line)") {
		t.Errorf("a long rule line is not cut before its source: %q", got[0])
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "…"},
		{"abcdef", 5, "ab…"},
		{"aééé", 5, "a…"},
		{"abcd", 2, ""},
		{"abcd", -5, ""},
	} {
		if got := clip(tc.s, tc.n); got != tc.want || len(got) > max(tc.n, 0) {
			t.Errorf("clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
