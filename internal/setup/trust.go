package setup

import (
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/setupstate"
	"github.com/agent-shim/agent-shim/statefile"
)

// Repository trust. A git hook run applies what a checkout's manifests say
// without a person looking: a branch (or an agent that wrote a manifest and
// then checked out a branch) could allow anything. So a hook run applies
// only what narrows the policy (a new deny or ask, an allow removed) and
// holds what widens it (a new allow, a deny or ask removed) until a person
// runs agents-setup, which applies both and names the widening in its
// summary. What is held is recorded in state.json (agents-setup --status
// lists it) and in the hook log, with the manifest file and line.

// widening returns what applying target (with its rules) to the file would
// widen: allow grants the file lacks, and managed ask and deny grants that
// target drops without moving them to a stricter list.
func widening(f *config.File, prevManaged, target config.Grants, rules []config.Rule) []setupstate.Held {
	var held []setupstate.Held
	seen := map[setupstate.Held]bool{}
	add := func(h setupstate.Held) {
		if !seen[h] {
			seen[h] = true
			held = append(held, h)
		}
	}
	have := setOf(f.Grants.Allow)
	for _, g := range target.Allow {
		if have[g] {
			continue
		}
		add(heldOf("allow", "add", g, rules))
	}
	tAsk, tDeny := setOf(target.Ask), setOf(target.Deny)
	for _, g := range prevManaged.Ask {
		if !tAsk[g] && !tDeny[g] {
			add(heldOf("ask", "remove", g, f.Shim.Rules))
		}
	}
	for _, g := range prevManaged.Deny {
		if !tDeny[g] {
			add(heldOf("deny", "remove", g, f.Shim.Rules))
		}
	}
	return held
}

// heldOf names a grant by the rule that expanded to it, else by itself.
func heldOf(list, change, grant string, rules []config.Rule) setupstate.Held {
	for _, r := range rules {
		if slices.Contains(r.Grants, grant) {
			return setupstate.Held{List: list, Change: change, Line: r.Line, File: r.Source.File, Num: r.Source.Line}
		}
	}
	return setupstate.Held{List: list, Change: change, Line: grant}
}

// narrow returns the target a hook run applies: target without what would
// widen the policy (see widening), which it returns too.
func narrow(f *config.File, prevManaged, target config.Grants, rules []config.Rule) (config.Grants, []config.Rule, []setupstate.Held) {
	held := widening(f, prevManaged, target, rules)
	var t config.Grants
	have := setOf(f.Grants.Allow)
	for _, g := range target.Allow {
		if have[g] {
			t.Allow = append(t.Allow, g)
		}
	}
	tAsk, tDeny := setOf(target.Ask), setOf(target.Deny)
	t.Deny = slices.Clone(target.Deny)
	for _, g := range prevManaged.Deny {
		if !tDeny[g] {
			t.Deny = append(t.Deny, g)
		}
	}
	deny := setOf(t.Deny)
	for _, g := range target.Ask {
		if !deny[g] {
			t.Ask = append(t.Ask, g)
		}
	}
	for _, g := range prevManaged.Ask {
		if !tAsk[g] && !deny[g] {
			t.Ask = append(t.Ask, g)
		}
	}
	ask := setOf(t.Ask)
	t.Allow = slices.DeleteFunc(t.Allow, func(g string) bool { return ask[g] || deny[g] })

	// The rules: those whose grants all stay, then the old rules of the
	// grants kept against the manifests.
	in := setOf(t.Allow)
	for g := range ask {
		in[g] = true
	}
	for g := range deny {
		in[g] = true
	}
	all := func(r config.Rule) bool {
		for _, g := range r.Grants {
			if !in[g] {
				return false
			}
		}
		return len(r.Grants) > 0
	}
	var out []config.Rule
	covered := map[string]bool{}
	for _, r := range rules {
		if all(r) {
			out = append(out, r)
			for _, g := range r.Grants {
				covered[g] = true
			}
		}
	}
	for _, r := range f.Shim.Rules {
		keep := false
		for _, g := range r.Grants {
			if !covered[g] && (ask[g] || deny[g]) && !tAsk[g] && !tDeny[g] {
				keep = true
			}
		}
		if keep && all(r) {
			out = append(out, r)
			for _, g := range r.Grants {
				covered[g] = true
			}
		}
	}
	if out == nil {
		out = []config.Rule{}
	}
	return t, out, held
}

func setOf(list []string) map[string]bool {
	s := make(map[string]bool, len(list))
	for _, g := range list {
		s[g] = true
	}
	return s
}

// heldText formats a held change: "allow + git push (file:3)".
func heldText(h setupstate.Held) string {
	sign := "+"
	if h.Change == "remove" {
		sign = "-"
	}
	src := ""
	if h.File != "" {
		src = fmt.Sprintf(" (%s:%d)", h.File, h.Num)
	}
	// A grant no rule names can be a regex of a kilobyte or more: cut it
	// so that the line fits (see maxLine).
	head := fmt.Sprintf("%s %s ", h.List, sign)
	return head + clip(h.Line, maxLine-2-len(head)-len(src)) + src
}

// maxListed bounds the widening a summary lists.
const maxListed = 20

// printWidening names, after a manual run, what it widened.
func (s *session) printWidening(w []setupstate.Held) {
	if len(w) == 0 || s.o.Hook {
		return
	}
	verb := "widens"
	if s.o.DryRun {
		verb = "would widen"
	}
	fmt.Fprintf(s.o.Stdout, "%s the policy (a git hook run holds these back):\n", verb)
	for i, h := range w {
		if i == maxListed && len(w) > maxListed+1 {
			fmt.Fprintf(s.o.Stdout, "  ... and %d more (agents-setup --dry-run lists the grants)\n", len(w)-i)
			break
		}
		fmt.Fprintf(s.o.Stdout, "  %s\n", heldText(h))
	}
}

// logHeld appends what a hook run held back to the hook log.
func (s *session) logHeld(held []setupstate.Held) {
	if !s.o.Hook {
		return
	}
	for _, h := range held {
		hooks.Log(s.store.Dir, "held", "held until a person runs agents-setup: "+heldText(h))
	}
}

// countUnmatched counts the digests that match no grant of their list.
func countUnmatched(g, digests config.Grants) int {
	n := 0
	e, d := lists(&g), lists(&digests)
	for i := range e {
		have := map[string]bool{}
		for _, x := range *e[i] {
			have[statefile.Digest(x)] = true
		}
		for _, x := range *d[i] {
			if !have[x] {
				n++
			}
		}
	}
	return n
}

// manifestGrants returns every grant any manifest line (of any category)
// or ad-hoc rule expands to. A line that does not expand is skipped: the
// set only decides which grants count as managed.
func manifestGrants(lines, adhoc []manifest.Line) map[string]bool {
	out := map[string]bool{}
	for _, ls := range [][]manifest.Line{lines, adhoc} {
		for _, l := range ls {
			gs, err := manifest.Grants(l.Text)
			if err != nil {
				continue
			}
			for _, g := range gs {
				out[g] = true
			}
		}
	}
	return out
}

// grantsIn returns the grants of g in set, per list.
func grantsIn(g config.Grants, set map[string]bool) config.Grants {
	var res config.Grants
	e, r := lists(&g), lists(&res)
	for i := range e {
		*r[i] = []string{}
		for _, x := range *e[i] {
			if set[x] {
				*r[i] = append(*r[i], x)
			}
		}
	}
	return res
}
