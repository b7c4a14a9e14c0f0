package secondline

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Gemini compiles the policy into a Gemini CLI policy file (TOML), which
// Gemini CLI loads from ~/.gemini/policies (the user tier) or
// /etc/gemini-cli/policies (the admin tier, above every other).
//
// What is compiled, and why:
//   - deny rules and the never-allow list, as decision "deny" at the
//     tier's highest priority;
//   - no ask rules: Gemini CLI turns ask_user into a refusal when it runs
//     headless, and would keep asking after the person approved the call
//     the way the hook's answer says (the hook answers ask as a deny with
//     the way to approve it);
//   - no allow rules: they would let a command run unseen that the hook,
//     missing, did not decide.
//
// A rule's commandRegex is matched against the tool's arguments as JSON,
// after `"command":"` (so from the start of the command), and Gemini CLI
// matches it again against each command of a compound line. So one rule
// is written per order of a shape's flags and operands, reading
// assignments and runners before the program, a path before its name,
// git's options before the subcommand, other words between the flags,
// and short flags in clusters. Gemini refuses an expression with a
// quantified group that holds a quantifier (it fears ReDoS): none is
// written. What is noted: words in quotes, a variable's value with
// spaces, an expression the policy had (a regex grant).
func Gemini(p *Policy) Output {
	var out Output
	var b bytes.Buffer
	b.WriteString(geminiHeader)
	var rules []geminiRule
	seen := map[string]string{}
	for _, s := range p.Shapes {
		if s.Decision != Deny {
			continue
		}
		if first, dup := seen[s.key()]; dup {
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "written as " + first})
			continue
		}
		seen[s.key()] = describe(s)
		var res []string
		switch {
		case s.Err != "":
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: s.Err})
			continue
		case s.Regex != "":
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "a regular expression of the policy: its meaning on the JSON of the arguments differs"})
			continue
		case s.Any:
			res = []string{""}
		default:
			res = geminiRegexps(s)
			if res == nil {
				out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "more than four flags and operands: their orders are not written"})
				continue
			}
			out.Notes = append(out.Notes, Note{Rule: s.Rule, Missing: "words in quotes or with escapes; a runner's option with a value of more than one word"})
		}
		fmt.Fprintf(&b, "\n# %s (%s)\n", describe(s), s.Source)
		for _, re := range res {
			b.WriteString("[[rule]]\ntoolName = \"run_shell_command\"\n")
			if re != "" {
				fmt.Fprintf(&b, "commandRegex = '%s'\n", re)
			}
			fmt.Fprintf(&b, "decision = \"deny\"\npriority = 999\ndenyMessage = %s\n",
				strconv.Quote("agent-shim: "+describe(s)+" is never run ("+s.Source+")"))
			rules = append(rules, newGeminiRule(re))
		}
		out.Compiled++
		out.Patterns += len(res)
	}
	out.Text = b.Bytes()
	out.decide = func(line string) Decision { return geminiDecide(rules, line) }
	return out
}

const geminiHeader = `# agent-shim's second line for Gemini CLI: the policy's deny rules and the
# never-allow list as policy rules, written by ` + "`agent-shim rules gemini-cli`" + `.
# Generated: edit the policy, not this file. Ask rules are not compiled
# (Gemini's ask_user would fight the hook's approval path), allow rules never.
`

// The parts of a command regex. A word is a run of characters that ends
// at a blank, a quote, a backslash (JSON's escapes) or a shell operator;
// the command ends at the quote that closes its JSON string (Gemini CLI's
// stableStringify writes a NUL after it, not the comma or brace).
const (
	geWord   = `[^ "\\;&|]`
	geEnd    = `( +|;|&|[|]|[)]|\\|")`
	geAssign = `[A-Za-z_][A-Za-z0-9_]*=` + geWord + `* +`
	geOpt    = `( +-` + geWord + `*| +[0-9]` + geWord + `*| +-` + geWord + `* +[^- "\\;&|]` + geWord + `*|)`
)

// geminiRegexps returns the commandRegex of each order of a shape.
func geminiRegexps(s Shape) []string {
	seqs := orders(s)
	if seqs == nil {
		return nil
	}
	var alts []string
	for _, st := range steps() {
		var ws []string
		for _, pos := range st {
			ws = append(ws, wordsRegexp(pos))
		}
		alts = append(alts, strings.Join(ws, ` +`))
	}
	plain := wordsRegexp(plainRunners()) + geOpt + ` +`
	runner := `(` + wordsRegexp(plainRunners()) + geOpt + `|` + strings.Join(alts, "|") + `) +`
	prefix := `(` + geAssign + `|)(` + geAssign + `|)(` + runner + `|)(` + plain + `|)(` + geWord + `*/|)`
	head := regexp.QuoteMeta(s.Program)
	if len(s.Globals) > 0 {
		g := `( +-` + geWord + `*| +-` + geWord + `* +[^- "\\;&|]` + geWord + `*|)`
		head += g + g
	}
	for _, w := range s.Sub {
		head += ` +` + regexp.QuoteMeta(w)
	}
	if s.Program == "git" && len(s.Sub) > 0 {
		dashed := `git-` + regexp.QuoteMeta(s.Sub[0])
		for _, w := range s.Sub[1:] {
			dashed += ` +` + regexp.QuoteMeta(w)
		}
		head = `(` + head + `|` + dashed + `)`
	}
	var out []string
	for _, seq := range seqs {
		re := prefix + head + ` +`
		for _, it := range seq {
			re += `([^"\\;&|]* +|)` + geminiItem(it, s) + geEnd
		}
		if len(seq) == 0 {
			re += geEnd
		}
		out = append(out, re)
	}
	return dedupe(out)
}

// geminiItem is the expression of one item of a shape's commands.
func geminiItem(it item, s Shape) string {
	var alts []string
	if it.operand != nil {
		if it.operand.Glob {
			alts = append(alts, globRegexp(it.operand.Text))
		} else {
			for _, w := range it.operand.Spellings() {
				alts = append(alts, regexp.QuoteMeta(w))
			}
		}
		return "(" + strings.Join(alts, "|") + ")"
	}
	for _, f := range it.flags {
		if len(it.flags) == 1 {
			for _, sp := range append(f.Spellings(), f.abbrevs()...) {
				alts = append(alts, regexp.QuoteMeta(sp))
			}
		}
	}
	if s.Extra != nil || len(it.flags) > 1 {
		class := "[" + regexp.QuoteMeta(string(s.Extra)) + "]*"
		var letters [][]byte
		for _, f := range it.flags {
			letters = append(letters, f.Shorts)
		}
		if !slices.ContainsFunc(letters, func(l []byte) bool { return len(l) == 0 }) {
			for _, perm := range permutations(len(it.flags)) {
				re := "-" + class
				for _, j := range perm {
					re += "[" + regexp.QuoteMeta(string(letters[j])) + "]" + class
				}
				alts = append(alts, re)
			}
		}
	}
	return "(" + strings.Join(dedupe(alts), "|") + ")"
}

// globRegexp turns a shell pattern operand into an expression over one
// word.
func globRegexp(glob string) string {
	var b strings.Builder
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(geWord + "*")
		case '?':
			b.WriteString(geWord)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// wordsRegexp is an expression for one word of several; words that are
// numbers after one prefix (nice's -20…19) are that prefix and a number.
func wordsRegexp(ws []string) string {
	if len(ws) > 3 {
		num := regexp.MustCompile(`^(.*?)(-?)[0-9]+$`) // compiled per call: rules only
		prefix, neg, ok := "", false, true
		for i, w := range ws {
			m := num.FindStringSubmatch(w)
			if m == nil || i > 0 && m[1] != prefix {
				ok = false
				break
			}
			prefix, neg = m[1], neg || m[2] != ""
		}
		if ok {
			if neg {
				return regexp.QuoteMeta(prefix) + `-?[0-9]+`
			}
			return regexp.QuoteMeta(prefix) + `[0-9]+`
		}
	}
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = regexp.QuoteMeta(w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "(" + strings.Join(q, "|") + ")"
}
