package secondline

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Codex compiles the policy into a Codex execpolicy rules file (Starlark,
// prefix_rule), which Codex loads from the rules/ directory of each of its
// configuration layers (~/.codex/rules, /etc/codex/rules).
//
// What is compiled, and why:
//   - deny rules and the never-allow list, as decision "forbidden";
//   - no ask rules: Codex's "prompt" asks in Codex's own approval flow,
//     which a headless run (codex exec) answers with a refusal, and which
//     would keep asking after the person approved the call the way the
//     hook's answer says (the hook answers ask as a deny with the way to
//     approve it);
//   - no allow rules: an allow in Codex runs the command outside the
//     sandbox.
//
// execpolicy matches a prefix of the command's words, literally, with
// alternatives per word (codex-rs/execpolicy/src/rule.rs: PrefixPattern).
// So a rule is written for every order of its flags and operands right
// after the subcommand, each flag in each spelling, combined short flags,
// the program by path, one of git's global options that take no value,
// git's dashed programs (git-push), and one or two runners before it
// (sudo, env, nohup, …). What a prefix cannot hold is noted: a word in
// between (git push origin --force), an option's value before the
// subcommand (git -C dir), a pattern (dd of=/dev/sd*), an expression.
func Codex(p *Policy) Output {
	var out Output
	var rules []codexRule
	// Lists of alternatives are written once, as variables: the
	// programs' spellings (P_git), the runners, and every other list of
	// three or more words used (A1, A2, …).
	names := map[string]string{}
	var defs bytes.Buffer
	name := func(words []string, v string) string {
		l := list(words)
		if len(words) < 3 {
			return l
		}
		if n, ok := names[l]; ok {
			return n
		}
		if v == "" {
			v = fmt.Sprintf("A%d", len(names)+1)
		}
		names[l] = v
		fmt.Fprintf(&defs, "%s = %s\n", v, l)
		return v
	}
	name(plainRunners(), "RUNNERS")
	var body bytes.Buffer
	seen := map[string]string{}
	for _, s := range p.Shapes {
		if s.Decision != Deny {
			continue
		}
		miss := codexMissing(s)
		if s.Err != "" || s.Any || s.Regex != "" || codexGlob(s) {
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: miss})
			continue
		}
		seqs := orders(s)
		if seqs == nil {
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "more than four flags and operands: their orders are not written"})
			continue
		}
		if first, dup := seen[s.key()]; dup {
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "written as " + first})
			continue
		}
		seen[s.key()] = describe(s)
		prog := programSpellings(s.Program)
		name(prog, "P_"+ident(s.Program))
		// The program, after no runner, one or two.
		plain := [][]string{plainRunners()}
		heads := [][][]string{{prog}, {plainRunners(), prog}, {plainRunners(), plainRunners(), prog}}
		for _, st := range steps() {
			heads = append(heads, slices.Concat(st, [][]string{prog}), slices.Concat(st, plain, [][]string{prog}), slices.Concat(plain, st, [][]string{prog}))
		}
		mids := [][][]string{nil}
		var noValue []string
		for _, g := range s.Globals {
			if !g.Value {
				noValue = append(noValue, g.Spelling)
			}
		}
		if len(noValue) > 0 {
			mids = append(mids, [][]string{noValue})
		}
		var sub [][]string
		for _, w := range s.Sub {
			sub = append(sub, []string{w})
		}
		var pats [][][]string
		for _, seq := range seqs {
			tails := codexTails(seq)
			for _, head := range heads {
				for _, mid := range mids {
					for _, tail := range tails {
						pats = append(pats, slices.Concat(head, mid, sub, tail))
					}
				}
			}
			if s.Program == "git" && len(s.Sub) > 0 {
				for _, tail := range tails {
					pats = append(pats, slices.Concat([][]string{dashedSpellings(s.Sub[0])}, sub[1:], tail))
				}
			}
		}
		just := fmt.Sprintf("J%d", out.Compiled+1)
		fmt.Fprintf(&body, "\n# %s (%s)\n%s = %s\n", describe(s), s.Source, just,
			strconv.Quote("agent-shim: "+describe(s)+" is never run ("+s.Source+")"))
		for _, pat := range pats {
			words := make([]string, len(pat))
			for i, alt := range pat {
				words[i] = name(alt, "")
			}
			fmt.Fprintf(&body, "prefix_rule(pattern = [%s], decision = \"forbidden\", justification = %s)\n",
				strings.Join(words, ", "), just)
			rules = append(rules, codexRule{pattern: pat})
		}
		out.Compiled++
		out.Patterns += len(pats)
		out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: miss})
	}
	var b bytes.Buffer
	b.WriteString(codexHeader)
	b.Write(defs.Bytes())
	b.Write(body.Bytes())
	out.Text = b.Bytes()
	out.decide = func(line string) Decision { return codexDecide(rules, line) }
	out.codex = rules
	return out
}

// ident turns a program name into a Starlark identifier's tail.
func ident(prog string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, prog)
}

const codexHeader = `# agent-shim's second line for Codex: the policy's deny rules and the
# never-allow list as execpolicy rules, written by ` + "`agent-shim rules codex`" + `.
# Generated: edit the policy, not this file. Ask rules are not compiled
# (Codex's prompt would fight the hook's approval path), allow rules never.
`

// codexTails returns the word positions of an order of items: each item
// one position with its spellings, and where operands end the order, the
// same with "--" before them.
func codexTails(seq []item) [][][]string {
	tail := make([][]string, len(seq))
	for i, it := range seq {
		tail[i] = it.words
	}
	out := [][][]string{tail}
	first := len(seq)
	for first > 0 && seq[first-1].operand != nil {
		first--
	}
	if first < len(seq) {
		out = append(out, slices.Concat(tail[:first], [][]string{{"--"}}, tail[first:]))
	}
	return out
}

// codexGlob reports whether a shape needs a pattern execpolicy lacks.
func codexGlob(s Shape) bool {
	for _, o := range s.Operands {
		if o.Glob {
			return true
		}
	}
	return false
}

// codexMissing says what the rules for s leave out.
func codexMissing(s Shape) string {
	switch {
	case s.Err != "":
		return s.Err
	case s.Any:
		return "every command: execpolicy matches a program by name, never any program"
	case s.Regex != "":
		return "a regular expression: execpolicy matches literal words"
	case codexGlob(s):
		return "an operand pattern: execpolicy matches literal words"
	}
	var miss []string
	if len(s.Flags)+len(s.Operands) > 0 {
		miss = append(miss, "words between the subcommand and its flags or operands (git push origin --force)")
	}
	if len(s.Flags) > 1 {
		miss = append(miss, "flags split over clusters of more than one letter each")
	}
	for _, g := range s.Globals {
		if g.Value {
			miss = append(miss, "options with a value before the subcommand (-C dir)")
			break
		}
	}
	miss = append(miss, "runners with a value of their own (nice -n 5, timeout 5), variables before the command")
	return strings.Join(miss, "; ")
}

func list(words []string) string {
	if len(words) == 1 {
		return strconv.Quote(words[0])
	}
	return "[" + strings.Join(quoteAll(words), ", ") + "]"
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strconv.Quote(w)
	}
	return out
}
