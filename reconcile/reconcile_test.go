package reconcile

import (
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/google/go-cmp/cmp"
)

// g builds grants from three space-separated lists: allow, ask, deny.
func g(allow, ask, deny string) config.Grants {
	return config.Grants{Allow: strings.Fields(allow), Ask: strings.Fields(ask), Deny: strings.Fields(deny)}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name                   string
		existing, prev, target config.Grants
		want, managed          config.Grants
		added, removed         config.Grants
	}{
		{
			name:     "first run on an empty file",
			existing: g("", "", ""), prev: g("", "", ""), target: g("a b", "c", "d"),
			want: g("a b", "c", "d"), managed: g("a b", "c", "d"),
			added: g("a b", "c", "d"), removed: g("", "", ""),
		},
		{
			name:     "first run keeps hand-added grants first",
			existing: g("u1", "", "u2"), prev: g("", "", ""), target: g("a", "", "d"),
			want: g("u1 a", "", "u2 d"), managed: g("a", "", "d"),
			added: g("a", "", "d"), removed: g("", "", ""),
		},
		{
			name:     "unchanged re-run",
			existing: g("u1 a", "c", "u2 d"), prev: g("a", "c", "d"), target: g("a", "c", "d"),
			want: g("u1 a", "c", "u2 d"), managed: g("a", "c", "d"),
			added: g("", "", ""), removed: g("", "", ""),
		},
		{
			name:     "retired grants go, new ones come after the user's",
			existing: g("a u1 b", "c", "d"), prev: g("a b", "c", "d"), target: g("b e", "c", "d"),
			want: g("u1 b e", "c", "d"), managed: g("b e", "c", "d"),
			added: g("e", "", ""), removed: g("a", "", ""),
		},
		{
			name:     "a grant moving between lists with the profile",
			existing: g("a", "c", ""), prev: g("a", "c", ""), target: g("a c", "", ""),
			want: g("a c", "", ""), managed: g("a c", "", ""),
			added: g("c", "", ""), removed: g("", "c", ""),
		},
		{
			name:     "a managed grant the user moved to deny stays denied once it retires",
			existing: g("", "", "a"), prev: g("a", "", ""), target: g("", "", ""),
			want: g("", "", "a"), managed: g("", "", ""),
			added: g("", "", ""), removed: g("", "", ""),
		},
		{
			name:     "a managed grant the user moved is taken back by the target",
			existing: g("", "", "a"), prev: g("a", "", ""), target: g("a", "", ""),
			want: g("a", "", ""), managed: g("a", "", ""),
			added: g("a", "", ""), removed: g("", "", "a"),
		},
		{
			name:     "a managed grant the user deleted comes back",
			existing: g("u", "", ""), prev: g("a u2", "", ""), target: g("a", "", ""),
			want: g("u a", "", ""), managed: g("a", "", ""),
			added: g("a", "", ""), removed: g("", "", ""),
		},
		{
			name:     "a hand-added grant equal to a target grant stays the user's",
			existing: g("a", "", ""), prev: g("", "", ""), target: g("a b", "", ""),
			want: g("a b", "", ""), managed: g("b", "", ""),
			added: g("b", "", ""), removed: g("", "", ""),
		},
		{
			name:     "duplicates in the file and in the target collapse",
			existing: g("u u a a", "", "d d"), prev: g("a", "", ""), target: g("a b b", "", "d"),
			want: g("u a b", "", "d"), managed: g("a b", "", ""),
			added: g("b", "", ""), removed: g("", "", ""),
		},
		{
			name:     "reset removes only managed grants",
			existing: g("u1 a", "c u2", "d"), prev: g("a", "c", "d"), target: g("", "", ""),
			want: g("u1", "u2", ""), managed: g("", "", ""),
			added: g("", "", ""), removed: g("a", "c", "d"),
		},
		{
			name:     "a target deny removes the same grant from the user's allow",
			existing: g("x u", "", ""), prev: g("", "", ""), target: g("", "", "x"),
			want: g("u", "", "x"), managed: g("", "", "x"),
			added: g("", "", "x"), removed: g("x", "", ""),
		},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate test %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("existing: %v, prev: %v, target: %v", tc.existing, tc.prev, tc.target)
			res := Merge(tc.existing, tc.prev, tc.target)
			if diff := cmp.Diff(tc.want, res.Grants); diff != "" {
				t.Errorf("grants (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.managed, res.Managed); diff != "" {
				t.Errorf("managed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.added, res.Added); diff != "" {
				t.Errorf("added (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.removed, res.Removed); diff != "" {
				t.Errorf("removed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSequences runs sequences of applies and resets, the way the CLI
// does, and checks that hand-added grants survive every step.
func TestSequences(t *testing.T) {
	profileA := g("a1 a2", "a3", "d1")
	profileB := g("a1 a3", "", "d1 d2")
	none := g("", "", "")
	hand := g("h1", "h2", "h3")
	steps := map[string][]config.Grants{
		"A":             {profileA},
		"A B":           {profileA, profileB},
		"A B A":         {profileA, profileB, profileA},
		"A reset":       {profileA, none},
		"A B reset A":   {profileA, profileB, none, profileA},
		"B A A reset B": {profileB, profileA, profileA, none, profileB},
	}
	for name, seq := range steps {
		t.Run(name, func(t *testing.T) {
			file := hand
			prev := none
			var history []config.Grants // what the file held before each step
			for i, target := range seq {
				history = append(history, file)
				res := Merge(file, prev, target)
				file, prev = res.Grants, res.Managed
				for _, want := range hand.Allow {
					if !contains(file.Allow, want) {
						t.Fatalf("step %d: lost hand-added %s: %v", i, want, file)
					}
				}
				if !contains(file.Ask, "h2") || !contains(file.Deny, "h3") {
					t.Fatalf("step %d: lost hand-added grants: %v", i, file)
				}
				// Every target grant is in its list, and only there.
				for _, l := range []struct{ got, want []string }{{file.Allow, target.Allow}, {file.Ask, target.Ask}, {file.Deny, target.Deny}} {
					for _, w := range l.want {
						if !contains(l.got, w) {
							t.Fatalf("step %d: target grant %s missing: %v", i, w, file)
						}
					}
				}
				// Re-running changes nothing.
				again := Merge(file, prev, target)
				if again.Changed(file) {
					t.Fatalf("step %d: re-run changed %v to %v", i, file, again.Grants)
				}
			}
			// Rolling back restores an earlier file; the next apply
			// from there (with the state of that time) keeps the user's.
			if len(history) > 1 {
				back := history[len(history)-1]
				res := Merge(back, none, seq[0])
				if !contains(res.Grants.Allow, "h1") {
					t.Fatalf("after rollback: lost hand-added grant: %v", res.Grants)
				}
			}
		})
	}
}

func TestCustom(t *testing.T) {
	got := Custom(g("u a", "c", "u2 d"), g("a", "c", "d"))
	if diff := cmp.Diff(g("u", "", "u2"), got); diff != "" {
		t.Errorf("Custom (-want +got):\n%s", diff)
	}
}

func TestChanged(t *testing.T) {
	res := Merge(g("a a", "", ""), g("", "", ""), g("", "", ""))
	if !res.Changed(g("a a", "", "")) {
		t.Error("dropping a duplicate: not reported as a change")
	}
	res = Merge(g("b a", "", ""), g("a", "", ""), g("a", "", ""))
	if res.Changed(g("b a", "", "")) {
		t.Error("unchanged: reported as a change")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
