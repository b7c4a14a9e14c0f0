// Package secondline compiles the policy into each agent's own rule
// engine: a Codex execpolicy .rules file, a Claude Code permissions
// fragment, a Gemini CLI policy TOML. These rules are the second line:
// when the hook is not there (turned off, broken by an agent release,
// rewritten by another hook), the agent's own engine still refuses the
// never-allowed.
//
// What is compiled is the policy as the hook reads it from config.json:
// its deny rules, the built-in never-allow list, and for agents whose own
// ask is the hook's ask (see each compiler), its ask rules. Allow rules
// never are: an allow in Codex means "run outside the sandbox", and an
// allow of Claude Code's cannot hold the exceptions our rules make.
//
// Each rule is read as a command shape (Shape): the program, its
// subcommand words, the flags it requires (with every spelling the
// knowledge table gives: -f and --force, -r and -R), and its operands.
// Each compiler writes the spellings of the shape its engine can express
// (program paths, flags in any order and place, combined short flags,
// git's global options, runners such as sudo and env) and says, per rule,
// what it cannot (Note).
//
// Nothing here runs when the hook decides a call: it is read by the
// rules, install and doctor commands only.
package secondline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Decision is what the second line does with a command a rule matches.
type Decision string

// The decisions a compiled rule may carry: never allow.
const (
	Deny Decision = "deny"
	Ask  Decision = "ask"
)

// Rule is one policy rule the second line is compiled from.
type Rule struct {
	// Text is the rule as the policy has it: a manifest line or a grant.
	Text     string
	Decision Decision
	// Source says where it came from: "never-allow" for the built-in
	// list, a manifest file:line, or the config.json list.
	Source string
}

// Shape is a rule read as the commands it matches.
type Shape struct {
	Rule
	// Any is set for command(*): every command; with Tool, every call
	// of that tool.
	Any bool
	// Regex is the expression of a command(regex:…) grant.
	Regex string
	// Program is the name the knowledge table knows the program by.
	Program string
	// Sub are the subcommand words (push of git push).
	Sub []string
	// Flags are the flags a command must carry, each with its spellings.
	Flags []Flag
	// Operands are the operands a command must carry, in any place.
	Operands []Operand
	// Extra are the short option letters of the program that take no
	// value: a cluster may hold them beside the required ones (rm -rfv).
	Extra []byte
	// Globals are the program's options before the subcommand (git -C,
	// --no-pager), for the engines that can skip them.
	Globals []Global
	// Err says why the rule could not be read as a shape at all.
	Err string
	// Tool is the tool a tool rule names (an MCP server's tool), with
	// Err set: only Claude Code's rules can name a tool, and only whole
	// (a rule of every call of it, Any).
	Tool string
}

// Flag is one flag a shape requires, with every spelling of it.
type Flag struct {
	Canon  string
	Shorts []byte   // one-letter spellings: 'f' of -f
	Longs  []string // long spellings without dashes: "force"
	// Dash is "-" for a single-dash program's long options (find
	// -delete), else "--".
	Dash string
}

// Spellings returns the flag's spellings as separate words (-f, --force).
func (f Flag) Spellings() []string {
	var out []string
	for _, c := range f.Shorts {
		out = append(out, "-"+string(c))
	}
	for _, l := range f.Longs {
		out = append(out, f.Dash+l)
	}
	return out
}

// Operand is an operand a shape requires.
type Operand struct {
	Text string
	// Glob is set when Text holds a shell pattern (/dev/sd*).
	Glob bool
}

// Spellings returns the literal words that name the operand the way the
// matcher reads it: / is also //, /. and /* (the matcher cleans paths,
// and /* covers / for deny); ~ is also ~/. Nil for a glob.
func (o Operand) Spellings() []string {
	switch {
	case o.Glob:
		return nil
	case o.Text == "/":
		return []string{"/", "//", "/.", "/./", "/*"}
	case o.Text == "~":
		return []string{"~", "~/"}
	case strings.HasPrefix(o.Text, "/") && len(o.Text) > 1 && !strings.HasSuffix(o.Text, "/"):
		return []string{o.Text, o.Text + "/"}
	}
	return []string{o.Text}
}

// Global is one option of a program before its subcommand.
type Global struct {
	Spelling string // -C, --no-pager
	Value    bool   // it takes a value (the next word, or attached with =)
}

// Policy is what the second line is compiled from.
type Policy struct {
	Shapes []Shape
}

// Rules returns the rules config.json gives the hook, as the second line
// compiles them: its deny list and the built-in never-allow list (never
// given as an argument: pass gate.NeverAllow()), and its ask list. A
// grant agents-setup wrote for a manifest line stands for that line.
func Rules(f *config.File, never []string) []Rule {
	lineOf := map[string]config.Rule{}
	for _, r := range f.Shim.Rules {
		for _, g := range r.Grants {
			if _, dup := lineOf[g]; !dup {
				lineOf[g] = r
			}
		}
	}
	var out []Rule
	seen := map[string]bool{}
	add := func(text string, d Decision, src string) {
		k := string(d) + "\x00" + text
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Rule{Text: text, Decision: d, Source: src})
	}
	for _, l := range never {
		add(l, Deny, "never-allow")
	}
	for _, list := range []struct {
		d      Decision
		name   string
		grants []string
	}{{Deny, "deny", f.Grants.Deny}, {Ask, "ask", f.Grants.Ask}} {
		for i, g := range list.grants {
			if m, ok := lineOf[g]; ok {
				src := m.Source.File
				if src != "" && m.Source.Line > 0 {
					src = fmt.Sprintf("%s:%d", src, m.Source.Line)
				}
				if src == "" {
					src = m.Source.Overlay
				}
				add(m.Line, list.d, src)
				continue
			}
			add(g, list.d, fmt.Sprintf("%s: grants %s[%d]", f.Path, list.name, i))
		}
	}
	return out
}

// Compile reads rules as shapes with the knowledge table tbl.
func Compile(rules []Rule, tbl *programs.Table) *Policy {
	p := &Policy{}
	for _, r := range rules {
		p.Shapes = append(p.Shapes, shapeOf(r, tbl))
	}
	return p
}

// shapeOf reads one rule.
func shapeOf(r Rule, tbl *programs.Table) Shape {
	s := Shape{Rule: r}
	text := r.Text
	if name, body, ok := grantShape(text); ok {
		switch {
		case name != "command" && body == "*":
			s.Tool, s.Any = name, true
			s.Err = "every call of the " + name + " tool: this agent's rules here decide shell commands only"
			return s
		case name != "command":
			s.Tool = name
			s.Err = "a rule on the arguments of the " + name + " tool: the agent's own rules cannot hold them"
			return s
		case body == "*":
			s.Any = true
			return s
		case strings.HasPrefix(body, "regex:"):
			s.Regex = strings.TrimPrefix(body, "regex:")
			return s
		}
		text = body
	}
	words, err := shellparse.Fields(text)
	if err != nil || len(words) == 0 {
		s.Err = fmt.Sprintf("cannot read the rule: %v", cmp.Or(err, fmt.Errorf("empty")))
		return s
	}
	args := make([]programs.Arg, len(words)-1)
	for i, w := range words[1:] {
		args[i] = programs.Arg{Text: w, Static: true}
	}
	name, b, rest := tbl.Resolve(words[0], args)
	s.Program = name
	if p := tbl.Program(name); p != nil {
		s.Globals = globals(p)
	}
	nsub := 0
	if b != nil && b.Key != name {
		nsub = len(strings.Fields(b.Key)) - 1
	}
	for _, a := range rest[:nsub] {
		s.Sub = append(s.Sub, a.Text)
	}
	rest = rest[nsub:]
	// Leading words that are not flags and that the table has no block
	// for are still subcommand words to the matcher (jiri runp).
	for len(rest) > 0 && len(s.Flags) == 0 && wordLike(rest[0].Text) && len(s.Operands) == 0 {
		s.Sub = append(s.Sub, rest[0].Text)
		rest = rest[1:]
	}
	dash := "--"
	if b != nil && b.Program().SingleDash != nil {
		dash = "-"
	}
	seen := map[string]bool{}
	for _, t := range b.Split(rest) {
		switch t.Kind {
		case programs.Option:
			canon := []string{t.Name}
			if t.Opt != nil && len(t.Opt.Canon) > 0 {
				canon = t.Opt.Canon
			}
			for _, c := range canon {
				if !seen[c] {
					seen[c] = true
					s.Flags = append(s.Flags, spellings(b, c, t, dash))
				}
			}
			if t.HasValue {
				s.Err = fmt.Sprintf("the option %s takes a value, which the second line does not compile", t.Name)
			}
		case programs.Operand:
			w := rest[t.Arg].Text
			s.Operands = append(s.Operands, Operand{Text: w, Glob: strings.ContainsAny(w, "*?[")})
		}
	}
	s.Extra = extraLetters(b, s.Flags)
	return s
}

// spellings returns every spelling of the canonical flag c in block b: the
// options of alias facts naming c, else the token as written.
func spellings(b *programs.Block, c string, t programs.Token, dash string) Flag {
	f := Flag{Canon: c, Dash: dash}
	for _, blk := range chain(b) {
		for _, fact := range blk.Facts() {
			if fact.Kind != programs.Alias || fact.Arg != c {
				continue
			}
			for _, sp := range fact.Args {
				addSpelling(&f, sp, dash)
			}
		}
	}
	if len(f.Shorts)+len(f.Longs) == 0 {
		if t.Long {
			f.Longs = []string{t.Name}
		} else {
			f.Shorts = []byte{t.Name[0]}
		}
	}
	return f
}

func addSpelling(f *Flag, sp, dash string) {
	switch {
	case dash == "--" && strings.HasPrefix(sp, "--"):
		if l := sp[2:]; !slices.Contains(f.Longs, l) {
			f.Longs = append(f.Longs, l)
		}
	case dash == "-" && strings.HasPrefix(sp, "-") && len(sp) > 2:
		if l := sp[1:]; !slices.Contains(f.Longs, l) {
			f.Longs = append(f.Longs, l)
		}
	case len(sp) == 2 && sp[0] == '-':
		if !slices.Contains(f.Shorts, sp[1]) {
			f.Shorts = append(f.Shorts, sp[1])
		}
	}
}

// chain returns b and the blocks whose facts hold for it (its program's).
func chain(b *programs.Block) []*programs.Block {
	if b == nil {
		return nil
	}
	out := []*programs.Block{b}
	if root := b.Program().Root; root != nil && root != b {
		out = append(out, root)
	}
	return out
}

// extraLetters returns the short options of b that take no value, for
// clusters: the required letters and every letter an alias fact names
// and no value fact does. Sorted.
func extraLetters(b *programs.Block, flags []Flag) []byte {
	var out []byte
	for _, f := range flags {
		out = append(out, f.Shorts...)
	}
	if b != nil && b.Program().SingleDash == nil {
		for _, blk := range chain(b) {
			for _, fact := range blk.Facts() {
				if fact.Kind != programs.Alias {
					continue
				}
				for _, sp := range fact.Args {
					if len(sp) == 2 && sp[0] == '-' && sp[1] != '-' {
						if o := b.Short(sp[1]); o != nil && o.Takes == programs.NoValue {
							out = append(out, sp[1])
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// globals lists a program's options before its subcommand.
func globals(p *programs.Program) []Global {
	var out []Global
	for _, f := range p.Root.Facts() {
		if f.Kind != programs.GlobalValue && f.Kind != programs.GlobalFlag {
			continue
		}
		for _, a := range f.Args {
			out = append(out, Global{Spelling: a, Value: f.Kind == programs.GlobalValue})
		}
	}
	return out
}

// grantShape splits name(body) as the matcher does.
func grantShape(text string) (name, body string, ok bool) {
	open := strings.IndexByte(text, '(')
	if open <= 0 || !strings.HasSuffix(text, ")") {
		return "", "", false
	}
	name = text[:open]
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return "", "", false
		}
	}
	return name, text[open+1 : len(text)-1], true
}

// wordLike reports whether a rule word reads as a subcommand, as the
// matcher's wordLike does.
func wordLike(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':' || r == '@'):
		default:
			return false
		}
	}
	return true
}

// Note says what the compiled rules of one agent cannot express of a rule.
type Note struct {
	Rule    Rule
	Missing string
}

func (n Note) String() string {
	return fmt.Sprintf("%s (%s, %s): %s", n.Rule.Text, n.Rule.Decision, n.Rule.Source, n.Missing)
}

// Output is one agent's second line.
type Output struct {
	// Text is the file (or fragment) to place beside the hook.
	Text []byte
	// Notes say, per rule, what the rules do not cover.
	Notes []Note
	// Compiled counts the policy rules that gave at least one agent rule;
	// Patterns the agent rules written.
	Compiled, Patterns int
	// decide is the agent's engine over these rules, re-implemented.
	decide func(line string) Decision
	// The rules as written, for the tests.
	codex  []codexRule
	claude []claudeRule
}

// Decide returns what the agent's own engine decides for a command line
// with these rules alone, as this package re-implements it: Deny, Ask,
// or "" when no rule matches. Coverage tests hold the re-implementation
// to the agent itself.
func (o Output) Decide(line string) Decision { return o.decide(line) }

// key identifies what a shape matches, for finding rules that say the
// same (git push -f and git push --force).
func (s Shape) key() string {
	if s.Err != "" {
		return fmt.Sprintf("%s\x00err\x00%s", s.Decision, s.Rule.Text)
	}
	var canon []string
	for _, f := range s.Flags {
		canon = append(canon, f.Canon)
	}
	slices.Sort(canon)
	var ops []string
	for _, o := range s.Operands {
		ops = append(ops, o.Text)
	}
	slices.Sort(ops)
	return fmt.Sprintf("%s\x00%q\x00%q\x00%q\x00%v\x00%s\x00%s", s.Decision, s.Program, s.Sub, canon, s.Any, s.Regex, strings.Join(ops, "\x00"))
}

// Load reads the policy of the config.json at path (absent: the
// never-allow list alone) and compiles it with the knowledge table and
// the overlays config.json names: never is the built-in never-allow list
// (gate.NeverAllow()).
func Load(path string, never []string) (*Policy, error) {
	f, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	tbl := programs.Builtin()
	if len(f.Shim.Programs) > 0 {
		files := make([]programs.File, len(f.Shim.Programs))
		for i, pf := range f.Shim.Programs {
			files[i] = programs.File{Name: pf.File, Data: []byte(pf.Text)}
		}
		if tbl, err = programs.WithOverlays(files...); err != nil {
			return nil, fmt.Errorf("%s: agentShim.programs: %w", path, err)
		}
	}
	return Compile(Rules(f, never), tbl), nil
}
