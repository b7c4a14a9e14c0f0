package secondline

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Claude compiles the policy into a Claude Code permissions fragment,
// {"permissions": {"deny": [...], "ask": [...]}}, for the settings file
// beside the hook (or the managed settings, which users cannot override).
//
// What is compiled, and why:
//   - deny rules and the never-allow list, into permissions.deny;
//   - ask rules, into permissions.ask: Claude's ask is the very prompt
//     the hook's "ask" answer opens, so it adds no prompt while the hook
//     is there, and keeps the asked asked when it is not;
//   - a tool rule of every call of a tool (mcp__github__delete_repo(*)),
//     by the tool's name; one on its arguments cannot be said (noted);
//   - no allow rules: an allow rule cannot hold the exceptions the
//     policy's deny and ask rules make, and it would let a command run
//     that the hook, missing, did not see.
//
// A Bash(…) rule matches a command's text with * for any run of
// characters. So a rule is written for the program by name and by path,
// git's options before the subcommand (git -* push), each spelling of
// its flags (a cluster of them too), in every order, next to each other
// or with other words between. What the text cannot say is noted: a
// short flag inside a longer cluster (-fdv), a program behind a runner
// Claude Code does not strip itself, an expression.
func Claude(p *Policy) Output {
	var out Output
	deny, ask := []string{}, []string{}
	seen := map[string]string{}
	var rules []claudeRule
	for _, s := range p.Shapes {
		if first, dup := seen[s.key()]; dup {
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "written as " + first})
			continue
		}
		seen[s.key()] = describe(s)
		var pats []string
		switch {
		case s.Tool != "" && s.Any:
			// permissions name a tool whole: mcp__server__tool.
			if s.Decision == Deny {
				deny = append(deny, s.Tool)
			} else {
				ask = append(ask, s.Tool)
			}
			out.Compiled++
			out.Patterns++
			continue
		case s.Err != "":
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: s.Err})
			continue
		case s.Regex != "":
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "a regular expression: Bash(…) rules match with * only"})
			continue
		case s.Any:
			pats = []string{""}
		default:
			pats = claudePatterns(s)
			if pats == nil {
				out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "more than four flags and operands: their orders are not written"})
				continue
			}
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: claudeMissing(s)})
		}
		for _, pat := range pats {
			rule := "Bash"
			if pat != "" {
				rule = "Bash(" + pat + ")"
			}
			if s.Decision == Deny {
				deny = append(deny, rule)
			} else {
				ask = append(ask, rule)
			}
			rules = append(rules, newClaudeRule(pat, s.Decision))
		}
		out.Compiled++
		out.Patterns += len(pats)
	}
	deny, ask = dedupe(deny), dedupe(ask)
	doc := map[string]any{"permissions": map[string]any{"deny": deny, "ask": ask}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(err) // strings only
	}
	out.Text = b.Bytes()
	out.decide = func(line string) Decision { return claudeDecide(rules, line) }
	out.claude = rules
	return out
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// claudePatterns returns the Bash(…) contents for a shape.
func claudePatterns(s Shape) []string {
	progs := []string{s.Program, "/usr/bin/" + s.Program, "/bin/" + s.Program}
	if s.Program == "git" {
		progs = append(progs, gitCore[0]+"/git")
	}
	var heads []string
	for _, p := range progs {
		heads = append(heads, strings.Join(append([]string{p}, s.Sub...), " "))
		if len(s.Globals) > 0 && len(s.Sub) > 0 {
			heads = append(heads, strings.Join(append([]string{p, "-*"}, s.Sub...), " "))
		}
	}
	if s.Program == "git" && len(s.Sub) > 0 {
		heads = append(heads, strings.Join(append([]string{gitCore[0] + "/git-" + s.Sub[0]}, s.Sub[1:]...), " "))
	}
	// The flags in every order, then the operands; or all the flags as
	// one cluster.
	var flagSeqs [][][]string
	if len(s.Flags)+len(s.Operands) > 4 {
		return nil
	}
	for _, perm := range permutations(len(s.Flags)) {
		var seq [][]string
		for _, j := range perm {
			seq = append(seq, s.Flags[j].Spellings())
		}
		flagSeqs = append(flagSeqs, seq)
	}
	if len(s.Flags) > 1 {
		if cl := clusters(s.Flags, nil); cl != nil {
			flagSeqs = append(flagSeqs, [][]string{cl})
		}
	}
	var ops [][]string
	for _, o := range s.Operands {
		if o.Glob {
			ops = append(ops, []string{o.Text}) // * is Claude's wildcard too
			continue
		}
		var words []string
		for _, w := range o.Spellings() {
			if !strings.Contains(w, "*") {
				words = append(words, w)
			}
		}
		ops = append(ops, words)
	}
	var out []string
	for _, fs := range flagSeqs {
		for _, words := range product(append(slices.Clone(fs), ops...)) {
			for _, gap := range []string{" ", " * "} {
				for _, end := range []string{"", " *"} {
					for _, h := range heads {
						if len(words) == 0 {
							out = append(out, h+end)
							continue
						}
						out = append(out, h+gap+strings.Join(words, gap)+end)
					}
				}
			}
		}
	}
	return dedupe(out)
}

// product returns every choice of one word per position.
func product(pos [][]string) [][]string {
	out := [][]string{{}}
	for _, alts := range pos {
		var next [][]string
		for _, prefix := range out {
			for _, a := range alts {
				next = append(next, append(slices.Clone(prefix), a))
			}
		}
		out = next
	}
	return out
}

func claudeMissing(s Shape) string {
	miss := []string{"runners Claude Code does not read through (busybox, su -c, script -c, unbuffer, a program it does not know)"}
	if len(s.Flags) > 0 {
		miss = append(miss, "a flag inside a cluster of other letters (-fv)")
	}
	if len(s.Operands) > 0 {
		miss = append(miss, "operands before the flags")
	}
	return strings.Join(miss, "; ")
}
