package policycheck

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/matcher"
)

// Kinds of finding.
const (
	KindRisky     = "risky"     // an allow rule for a runner, interpreter, shell, build tool or writer
	KindShadowed  = "shadowed"  // a rule a stronger list always overrides
	KindDuplicate = "duplicate" // the same rule twice in one category
	KindUnknown   = "unknown"   // a subcommand the program does not have
	KindSpelling  = "spelling"  // a deny rule that misses a usual spelling of its command
)

// A Finding is one problem lint found in a manifest line.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Rule     string `json:"rule"`
	Category string `json:"category"`
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: `%s`: %s\n\tfix: %s", f.File, f.Line, f.Kind, f.Rule, f.Message, f.Fix)
}

// Lint checks the manifest lines of a tree and returns its findings in
// file and line order.
func Lint(lines []manifest.Line) []Finding {
	var out []Finding
	out = append(out, lintRisky(lines)...)
	out = append(out, lintShadowed(lines)...)
	out = append(out, lintDuplicates(lines)...)
	out = append(out, lintUnknown(lines)...)
	out = append(out, lintSpelling(lines)...)
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

func finding(l manifest.Line, kind, msg, fix string) Finding {
	return Finding{File: l.File, Line: l.Num, Rule: l.Text, Category: l.Category, Kind: kind, Message: msg, Fix: fix}
}

// words returns a plain manifest line's words and its program's base
// name; ok is false for a grant line (name(…)).
func words(l manifest.Line) (ws []string, prog string, ok bool) {
	if i := strings.IndexByte(l.Text, '('); i > 0 && strings.HasSuffix(l.Text, ")") && !strings.ContainsAny(l.Text[:i], " \t") {
		return nil, "", false
	}
	ws = strings.Fields(l.Text)
	if len(ws) == 0 {
		return nil, "", false
	}
	return ws, path.Base(ws[0]), true
}

// allowed reports whether a category is allowed by some profile.
func allowed(category string) bool { return category != "never_allow" }

// lintRisky finds allow rules for programs that run or write anything.
func lintRisky(lines []manifest.Line) []Finding {
	var out []Finding
	for _, l := range lines {
		if !allowed(l.Category) {
			continue
		}
		if body, ok := strings.CutPrefix(l.Text, "command("); ok && (body == "*)" || body == "regex:.*)" || body == "regex:^.*$)") {
			out = append(out, finding(l, KindRisky, "allows every command", "remove it"))
			continue
		}
		ws, prog, ok := words(l)
		if !ok {
			continue
		}
		rest := ws[1:]
		r, found := risk{}, false
		if len(ws) >= 3 {
			r, found = risky[prog+" "+ws[1]+" "+ws[2]]
			rest = ws[3:]
		}
		if !found && len(ws) >= 2 {
			r, found = risky[prog+" "+ws[1]]
			rest = ws[2:]
		}
		if !found {
			r, found = risky[prog]
			rest = ws[1:]
		}
		if !found && writers[prog] && l.Category == "read_only" {
			r, found = writerRisk, true
		}
		if !found && len(ws) <= 2 && l.Category == "read_only" {
			// The table's block: the program, or a subcommand's. Only
			// in read_only: elsewhere an option that runs code is
			// what the category is about, and the shim asks for it.
			block := strings.Join(append([]string{prog}, ws[1:]...), " ")
			if r, found = tableRisk(block); found {
				rest = nil
			}
		}
		if !found || len(rest) > 0 && allHarmless(rest) {
			continue
		}
		if r == buildRisk && l.Category != "read_only" {
			// Running the checkout's build and tests is what the other
			// allowed categories are for; under the run-time layer each
			// program a recipe runs is decided, and without it a recipe
			// the same line wrote asks (the table's reads facts).
			continue
		}
		if prog == "sed" && slices.Contains(rest, "-n") {
			continue // prints lines; the shim asks for w and e
		}
		name := strings.Join(ws[:len(ws)-len(rest)], " ")
		out = append(out, finding(l, KindRisky,
			fmt.Sprintf("%s is %s: it %s, and %s allows it unattended", name, r.kind, r.why, l.Category), r.fix))
	}
	return out
}

func allHarmless(ws []string) bool {
	for _, w := range ws {
		if !harmlessWords[w] {
			return false
		}
	}
	return true
}

// neverRules are the built-in never-allow list, as deny rules.
func neverRules(p *matcher.Policy) {
	for _, l := range gate.NeverAllow() {
		p.Add(matcher.Deny, l, matcher.Source{Category: "never_allow", Overlay: "builtin"})
	}
}

// decides reports the rule that decides line in p, when a rule of
// decision d matches it outright.
func decides(p *matcher.Policy, line string, d matcher.Decision) *matcher.Rule {
	res := p.Decide(line)
	if res.Err != nil || len(res.Commands) != 1 {
		return nil
	}
	v := res.Commands[0]
	if v.Rule == nil || v.Rule.Decision != d || v.Decision != d || v.Inside != "" {
		return nil
	}
	return v.Rule
}

func ruleName(r *matcher.Rule) string {
	s := "`" + r.Text + "`"
	if r.Source.Overlay == "builtin" && r.Source.File == "" {
		return s + " (the built-in never-allow list)"
	}
	if src := r.Source.String(); src != "" {
		s += " (" + src + ")"
	}
	return s
}

// lintShadowed finds allow rules that a deny or ask rule of the same
// profile always overrides, and ask rules a deny rule does: every command
// the weaker rule matches, the stronger one matches too.
func lintShadowed(lines []manifest.Line) []Finding {
	type key struct {
		line       int
		by, byList string
	}
	profiles := map[key][]string{}
	var order []key
	byIndex := map[int]manifest.Line{}
	for _, prof := range manifest.Profiles {
		allowCats, askCats, denyCats, _ := manifest.Lists(prof)
		deny, askDeny := matcher.New(), matcher.New()
		neverRules(deny)
		neverRules(askDeny)
		for _, l := range lines {
			src := matcher.Source{Category: l.Category, Overlay: l.Overlay, File: l.File, Line: l.Num}
			switch {
			case slices.Contains(denyCats, l.Category):
				deny.Add(matcher.Deny, l.Text, src)
				askDeny.Add(matcher.Deny, l.Text, src)
			case slices.Contains(askCats, l.Category):
				askDeny.Add(matcher.Ask, l.Text, src)
			}
		}
		for i, l := range lines {
			if _, _, ok := words(l); !ok {
				continue
			}
			var r *matcher.Rule
			switch {
			case slices.Contains(allowCats, l.Category):
				if r = decides(askDeny, l.Text, matcher.Deny); r == nil {
					r = decides(askDeny, l.Text, matcher.Ask)
				}
			case slices.Contains(askCats, l.Category):
				r = decides(deny, l.Text, matcher.Deny)
			}
			if r == nil || r.Source.File == l.File && r.Source.Line == l.Num {
				continue
			}
			k := key{i, ruleName(r), r.Decision.String()}
			if _, seen := profiles[k]; !seen {
				order = append(order, k)
			}
			profiles[k] = append(profiles[k], prof)
			byIndex[i] = l
		}
	}
	var out []Finding
	for _, k := range order {
		l := byIndex[k.line]
		ps := profiles[k]
		under := "in any profile"
		if len(ps) < len(manifest.Profiles) {
			under = "under " + strings.Join(ps, ", ")
		}
		out = append(out, finding(l, KindShadowed,
			fmt.Sprintf("this rule never applies %s: the %s rule %s matches every command it matches", under, k.byList, k.by),
			"remove this line, or narrow the "+k.byList+" rule if this command should run"))
	}
	return out
}

// lintDuplicates finds a rule that an earlier rule of the same category
// says again, in any overlay: each matches every command the other does
// (git -C x log and git log), and for the deny list each denies the same
// spellings (see same).
func lintDuplicates(lines []manifest.Line) []Finding {
	var out []Finding
	type group struct{ cat, prog string }
	groups := map[group][]manifest.Line{}
	for _, l := range lines {
		_, prog, ok := words(l)
		if !ok {
			continue
		}
		g := group{l.Category, prog}
		for _, prev := range groups[g] {
			if same(prev, l) {
				msg := fmt.Sprintf("says again what `%s` (%s:%d) says", prev.Text, prev.File, prev.Num)
				if prev.Overlay != l.Overlay {
					msg += ", in overlay " + prev.Overlay
				}
				if ws, _, _ := words(l); len(ws) > 1 && ws[1] == "-C" {
					msg += " (git's -C is not part of a rule: the rule holds in every directory)"
				}
				out = append(out, finding(l, KindDuplicate, msg, "remove this line"))
				break
			}
		}
		groups[g] = append(groups[g], l)
	}
	return out
}

// same reports whether two rules of one category match the same commands:
// each matches the other's command line. Two deny rules must also expand
// to the same grants: a spelling the shim reads as the same command (rm
// -fr for rm -rf) is still a deny grant of its own for an agent that
// applies config.json's grants itself.
func same(a, b manifest.Line) bool {
	if strings.Join(strings.Fields(a.Text), " ") == strings.Join(strings.Fields(b.Text), " ") {
		return true
	}
	pa, pb := matcher.New(), matcher.New()
	pa.Add(matcher.Deny, a.Text, matcher.Source{})
	pb.Add(matcher.Deny, b.Text, matcher.Source{})
	if decides(pa, b.Text, matcher.Deny) == nil || decides(pb, a.Text, matcher.Deny) == nil {
		return false
	}
	if allowed(a.Category) {
		return true // a spelling the agent's allow grant misses only asks
	}
	ga, errA := manifest.DenyGrants(a.Text)
	gb, errB := manifest.DenyGrants(b.Text)
	return errA == nil && errB == nil && slices.Equal(ga, gb)
}

// lintUnknown finds subcommands that the program does not have: a typo
// (git stauts) matches nothing, so the rule never allows, asks or denies.
func lintUnknown(lines []manifest.Line) []Finding {
	var out []Finding
	for _, l := range lines {
		ws, prog, ok := words(l)
		if !ok {
			continue
		}
		subs := subcommands[prog]
		if subs == nil {
			continue
		}
		i := 1
		for i < len(ws) && strings.HasPrefix(ws[i], "-") {
			if prog == "git" && gitGlobalValued[ws[i]] && !strings.Contains(ws[i], "=") {
				i++
			}
			i++
		}
		if i >= len(ws) {
			continue
		}
		sub := ws[i]
		if slices.Contains(subs, sub) {
			continue
		}
		msg := fmt.Sprintf("%s has no subcommand %q: the rule matches nothing", prog, sub)
		fix := "remove the line, or spell the subcommand right"
		if near := nearest(sub, subs); near != "" {
			fixed := slices.Clone(ws)
			fixed[i] = near
			fix = fmt.Sprintf("did you mean `%s`?", strings.Join(fixed, " "))
		} else if prog == "git" {
			msg += " (unless it is a git alias or a git-" + sub + " program of your own)"
		}
		out = append(out, finding(l, KindUnknown, msg, fix))
	}
	return out
}

// nearest returns the word of list closest to w, if within two edits
// (a swap of two letters counts as one).
func nearest(w string, list []string) string {
	best, bestD := "", 3
	for _, c := range list {
		if d := distance(w, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance of a and b.
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// lintSpelling finds never-allow rules that a usual spelling of their
// command gets past: the short or long form of a flag the matcher does not
// know as an alias for this program, the flags split or clustered, the
// program by path or behind env, git's -C. Each spelling is decided by
// every deny rule together (the manifests' and the built-in list), so a
// spelling another line covers is no finding.
func lintSpelling(lines []manifest.Line) []Finding {
	deny := matcher.New()
	neverRules(deny)
	for _, l := range lines {
		if l.Category == "never_allow" {
			deny.Add(matcher.Deny, l.Text, matcher.Source{Category: l.Category, Overlay: l.Overlay, File: l.File, Line: l.Num})
		}
	}
	var out []Finding
	for _, l := range lines {
		if l.Category != "never_allow" {
			continue
		}
		ws, _, ok := words(l)
		if !ok || strings.ContainsAny(l.Text, "'\"\\$`*?[") {
			continue
		}
		if decides(deny, l.Text, matcher.Deny) == nil {
			continue // the rule cannot be read as a command; the matcher reports that
		}
		var missed []string
		for _, v := range spellings(ws) {
			if decides(deny, v, matcher.Deny) == nil {
				missed = append(missed, v)
			}
		}
		if len(missed) == 0 {
			continue
		}
		quoted := make([]string, len(missed))
		for i, m := range missed {
			quoted[i] = "`" + m + "`"
		}
		out = append(out, finding(l, KindSpelling,
			"does not deny "+strings.Join(quoted, ", "),
			"add each as a line of its own in never_allow.txt (where it means the same), or a flag alias to the program table"))
	}
	return out
}

// spellings returns other usual spellings of a command.
func spellings(ws []string) []string {
	var out []string
	add := func(v []string) {
		s := strings.Join(v, " ")
		if s != strings.Join(ws, " ") && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for i, w := range ws {
		if i == 0 {
			continue
		}
		if short, ok := shortAliases[w]; ok {
			v := slices.Clone(ws)
			v[i] = short
			add(v)
		}
		for long, short := range shortAliases {
			if w == short {
				v := slices.Clone(ws)
				v[i] = long
				add(v)
			}
		}
		// -rf as -r -f and as -fr.
		if len(w) > 2 && w[0] == '-' && w[1] != '-' && isLetters(w[1:]) {
			v := slices.Clone(ws[:i])
			for _, c := range w[1:] {
				v = append(v, "-"+string(c))
			}
			add(append(v, ws[i+1:]...))
			r := []byte(w[1:])
			slices.Reverse(r)
			v = slices.Clone(ws)
			v[i] = "-" + string(r)
			add(v)
		}
	}
	add(append([]string{"/usr/bin/" + ws[0]}, ws[1:]...))
	add(append([]string{"env", "FOO=1", ws[0]}, ws[1:]...))
	if path.Base(ws[0]) == "git" && len(ws) > 1 {
		add(append([]string{ws[0], "-C", "."}, ws[1:]...))
	}
	return out
}

func isLetters(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
