package matcher

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Source says where a rule came from.
type Source struct {
	Category string // manifest category (never_allow, …) or "ad-hoc"
	Overlay  string // "." for the checkout root, "vendor/x", "builtin", "ad-hoc"
	File     string // manifest file, relative to the checkout root
	Line     int    // 1-based line in File; 0 when not from a file
}

func (s Source) String() string {
	switch {
	case s.File != "" && s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.File != "":
		return s.File
	case s.Overlay != "":
		return s.Overlay
	}
	return ""
}

// Rule is one rule of a policy. Rules are compiled on first use, so a
// policy costs only what the decisions made with it need.
type Rule struct {
	// Text is the rule as written: a manifest line or a grant string.
	Text string
	// Decision is the list the rule belongs to.
	Decision Decision
	// Source is where the rule came from; zero for a grant without one.
	Source Source
	// Grant is the config.json grant the rule stands for, when it came
	// from a managed entry (Text is then the manifest line).
	Grant string

	seq  int    // position in the policy's rules, for the order of scans
	lead string // leadWords of Text, set when added; "" when it has none
	// lead2 is the second subcommand word leadWords found, or "".
	lead2 string
	key   string // grantKey of a regex grant, set when added
	once  sync.Once
	c     *compiled // set by compile; a pointer keeps uncompiled rules small
	err   error
}

type ruleKind int

const (
	lineRule  ruleKind = iota // a manifest line, matched semantically
	regexRule                 // command(regex:RE)
	anyRule                   // command(*)
)

type compiled struct {
	kind     ruleKind
	prog     string
	sub      []string // leading subcommand words, in order
	operands []string // further words, matched as a set
	flags    []string // canonical flags, all required
	re       *regexp.Regexp
	help     bool // the program is a help tool: `prog help` also allows --help
}

// names reports whether a rule names the table block key, or a
// subcommand of it: `curl` names curl, `gh pr` names gh; `pip` does not
// name pip install. A grant (command(regex:…)) that matches the command
// names what it matches: a person wrote it, or answered always.
func (c *compiled) names(key string) bool {
	if c.kind != lineRule {
		return true
	}
	words := strings.Fields(key)
	if words[0] != c.prog || len(c.sub) < len(words)-1 {
		return false
	}
	return slices.Equal(c.sub[:len(words)-1], words[1:])
}

// errNotCommand marks a grant for another tool (read_file(…)): valid, but
// not a rule about commands.
var errNotCommand = errors.New("not a command grant")

// grantShape splits name(body); ok is false for a plain manifest line.
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

// program returns the program a rule applies to without compiling it, for
// indexing: "" for rules that may match any program.
func program(text string) string {
	if name, body, ok := grantShape(text); ok {
		if name != "command" || body == "*" || strings.HasPrefix(body, "regex:") {
			return ""
		}
		text = body
	}
	text = strings.TrimLeft(text, " \t")
	first := text
	if i := strings.IndexAny(text, " \t\n"); i >= 0 {
		first = text[:i]
	}
	if first == "" || strings.ContainsAny(first, `'"\$`+"`") {
		return ""
	}
	base := strings.ToLower(path.Base(first))
	if strings.HasPrefix(base, "git-") {
		return "git"
	}
	return base
}

// leadWords returns the subcommand words a plain manifest line starts
// with (push of `git push --force`, target and list of `ffx target
// list`), at most two, read without compiling the rule; ok is false when
// they cannot be told that simply: a grant, quotes, patterns, paths, a
// dash, or `help` first (which help tools match more widely). For a line
// it reads, the compiled rule's first subcommand words are these
// (TestLeadWords checks every default manifest line); lead2 is "" when
// the second word is not one.
func leadWords(text string) (lead, lead2 string, ok bool) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(c == ' ' || c == '-' || c == '_' || c == '.' || c == ':' || c == '@' || c == ',' || c == '+' || c == '=' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	prog, rest, _ := strings.Cut(strings.TrimLeft(text, " "), " ")
	lead, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
	if prog == "" || strings.HasPrefix(strings.ToLower(prog), "git-") || !wordLike(lead) || lead == "help" {
		return "", "", false
	}
	if lead2, _, _ = strings.Cut(strings.TrimLeft(rest, " "), " "); !wordLike(lead2) {
		lead2 = ""
	}
	return lead, lead2, true
}

// mayLead reports whether rule r could match c as far as its first
// subcommand words tell, without compiling r: false only when r is a
// plain line whose lead words (see leadWords) differ from c's first
// words that are not flags, or c has too few; match would then return
// none. prog is c's program in the table.
func (c *call) mayLead(r *Rule, prog *programs.Program) bool {
	if r.lead == "" {
		return true
	}
	if _, global, _ := prog.Global(r.lead); global {
		return true // read as an option before the subcommand
	}
	c.first()
	if len(c.leads) == 0 || c.leads[0].kind == posTok && c.leads[0].text != r.lead {
		return false
	}
	if r.lead2 == "" {
		return true
	}
	return len(c.leads) > 1 && (c.leads[1].kind != posTok || c.leads[1].text == r.lead2)
}

// first finds c's first two arguments that are not flags, once.
func (c *call) first() {
	if c.firstKnown {
		return
	}
	c.firstKnown = true
	for _, t := range c.toks {
		if t.kind == flagTok {
			continue
		}
		if c.leads = append(c.leads, t); len(c.leads) == 2 {
			break
		}
	}
}

func (r *Rule) compile(tbl *programs.Table) error {
	r.once.Do(func() {
		c, err := compileRule(tbl, r.Text)
		r.c, r.err = &c, err
	})
	return r.err
}

// Check compiles the rule and reports whether it is well formed.
func (r *Rule) Check() error { return r.compile(programs.Builtin()) }

func compileRule(tbl *programs.Table, text string) (compiled, error) {
	if name, body, ok := grantShape(text); ok {
		if name != "command" {
			return compiled{}, errNotCommand
		}
		switch {
		case body == "*":
			return compiled{kind: anyRule}, nil
		case strings.HasPrefix(body, "regex:"):
			re, err := regexp.Compile(strings.TrimPrefix(body, "regex:"))
			if err != nil {
				return compiled{}, fmt.Errorf("grant %s: %w", text, err)
			}
			return compiled{kind: regexRule, re: re}, nil
		}
		// command(git push --force) is read as the manifest line it
		// spells, so that it holds for every spelling of the command
		// (git push -f origin, git -C x push --force), not only for
		// text that starts with these words.
		c, err := compileLine(tbl, body)
		if err != nil {
			return compiled{}, fmt.Errorf("grant %s: %w", text, err)
		}
		return c, nil
	}
	return compileLine(tbl, text)
}

// compileLine compiles a manifest line: program, leading words, operands
// and flags.
func compileLine(tbl *programs.Table, text string) (compiled, error) {
	words, err := shellparse.Fields(text)
	if err != nil {
		return compiled{}, fmt.Errorf("rule %q: %v", text, err)
	}
	if len(words) == 0 {
		return compiled{}, fmt.Errorf("rule %q: empty", text)
	}
	ws := make([]shellparse.Word, len(words))
	for i, w := range words {
		ws[i] = shellparse.Word{Text: w, Static: true, Glob: strings.ContainsAny(w, "*?[")}
	}
	c := newCall(tbl, ws, "")
	out := compiled{kind: lineRule, prog: c.prog}
	if c.block != nil && c.block.Program().HelpFact != nil {
		out.help = true
	}
	leading := true
	for _, t := range c.toks {
		switch t.kind {
		case flagTok:
			leading = false
			out.flags = append(out.flags, t.flags...)
		case posTok:
			if leading && wordLike(t.text) {
				out.sub = append(out.sub, t.text)
				continue
			}
			leading = false
			out.operands = append(out.operands, t.text)
		}
	}
	return out, nil
}

// wordLike reports whether a rule word reads as a subcommand (push, run-script,
// origin) rather than a path or pattern.
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

// strength is how well a rule matches a command.
type strength int

const (
	none     strength = iota
	possible          // matches for some value of a word not known statically
	definite
)

// match reports how well r matches c. strict (for allow rules) refuses to
// look for subcommand words past a flag, whose value it might be.
func (r *Rule) match(c *call, cmd *shellparse.Command, home string) strength {
	strict := r.Decision == Allow
	switch r.c.kind {
	case anyRule:
		return definite
	case regexRule:
		return r.matchRegex(c, cmd)
	}
	if c.prog != r.c.prog {
		return none
	}
	if r.c.help && len(r.c.sub) == 1 && r.c.sub[0] == "help" && len(r.c.operands)+len(r.c.flags) == 0 && helpCall(c) {
		return definite
	}
	s := definite
	toks := c.toks
	i := 0
	for k, want := range r.c.sub {
		found := false
		for i < len(toks) && !found {
			t := toks[i]
			i++
			switch t.kind {
			case flagTok:
				// An allow rule looks past a flag only when the table
				// vouches that it takes no value or what its value
				// is: otherwise the next word may be that value.
				// Never before the first: an option before the
				// subcommand may change what it is (go -C x test).
				if strict && (!t.known || k == 0) {
					return none
				}
			case wildTok:
				s = possible
				found = true
			case posTok:
				if t.text != want {
					return none
				}
				found = true
			}
		}
		if !found {
			return none
		}
	}
	rest := toks[i:]
	for _, want := range r.c.operands {
		s = min(s, operandIn(want, rest, home, !strict))
		if s == none {
			return none
		}
	}
	for _, want := range r.c.flags {
		s = min(s, flagIn(want, toks, strict))
		if s == none {
			return none
		}
	}
	return s
}

func flagIn(want string, toks []tok, strict bool) strength {
	wild := false
	for _, t := range toks {
		switch t.kind {
		case flagTok:
			if slices.Contains(t.flags, want) {
				return definite
			}
			// An abbreviated long option (--forc, --recur) means the
			// option it abbreviates, as getopt and git read it. Only
			// deny and ask rules read it so: allow rules stay exact.
			if !strict && t.abbrev != "" && len(t.abbrev) < len(want) && strings.HasPrefix(want, t.abbrev) {
				return definite
			}
		case wildTok:
			if t.flag {
				wild = true
			}
		}
	}
	if wild {
		return possible
	}
	return none
}

func operandIn(want string, toks []tok, home string, useHome bool) strength {
	best := none
	for _, t := range toks {
		switch t.kind {
		case posTok:
			best = max(best, operandTok(want, t))
			if useHome && strings.HasPrefix(want, "~") {
				best = max(best, homeOperand(want, t, home))
			}
		case wildTok:
			if home, ok := homeWord(t.word); ok {
				best = max(best, operandMatch(want, home, false))
				continue
			}
			best = max(best, possible)
		}
		if best == definite {
			return best
		}
	}
	return best
}

// homeWord reads $HOME, ${HOME} and "$HOME" (with an optional /suffix) as
// ~, and the expansions of HOME with a fallback as bash does with HOME set
// (see homeExpansions): "${HOME:?}/" is ~/, "${HOME:+/}" is /.
func homeWord(w shellparse.Word) (string, bool) {
	t := homeExpansions(strings.ReplaceAll(w.Text, `"`, ""))
	for _, p := range []string{"${HOME}", "$HOME"} {
		if rest, ok := strings.CutPrefix(t, p); ok && (rest == "" || rest[0] == '/') &&
			!strings.ContainsAny(rest, "$`*?[") {
			return "~" + rest, true
		}
	}
	if t != strings.ReplaceAll(w.Text, `"`, "") && t != "" && !strings.ContainsAny(t, "$`*?['\\") {
		return t, true // ${HOME:+/}: the word that replaces it
	}
	return "", false
}

// homeExpansions rewrites the expansions of HOME that bash reads as $HOME
// because HOME is set and not empty: ${HOME:?msg}, ${HOME?msg},
// ${HOME:-w}, ${HOME-w}, ${HOME:=w} and ${HOME=w} are $HOME; ${HOME:+w}
// and ${HOME+w} are w.
func homeExpansions(t string) string {
	for {
		i := strings.Index(t, "${HOME")
		if i < 0 {
			return t
		}
		rest := t[i+len("${HOME"):]
		op := ""
		for _, o := range []string{":?", ":-", ":=", ":+", "?", "-", "=", "+"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return t // ${HOME}, ${HOMEDIR}: nothing to rewrite
		}
		end, depth := -1, 0
		for j := len(op); j < len(rest) && end < 0; j++ {
			switch rest[j] {
			case '{':
				depth++
			case '}':
				if depth == 0 {
					end = j
				}
				depth--
			}
		}
		if end < 0 {
			return t
		}
		repl := "$HOME"
		if strings.HasSuffix(op, "+") {
			repl = rest[len(op):end]
		}
		t = t[:i] + repl + rest[end+1:]
	}
}

// operandTok compares a rule operand with a positional, resolving a
// relative positional against the working directory when it is known.
func operandTok(want string, t tok) strength {
	if !absolute(want) || absolute(t.text) {
		return operandMatch(want, t.text, t.word.Glob)
	}
	if t.resolved != "" {
		return operandMatch(want, t.resolved, t.word.Glob)
	}
	// A relative path naming its whole directory (., .., ../.., *) in a
	// directory nobody knows could be the rule's path.
	if coversDir(t.text, t.word.Glob) {
		return possible
	}
	return none
}

func absolute(s string) bool { return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") }

func coversDir(s string, glob bool) bool {
	if glob {
		dir, base := path.Split(s)
		if base != "*" && base != ".*" && base != "**" {
			return false
		}
		s = dir
		if s == "" {
			return true
		}
	}
	for _, part := range strings.Split(path.Clean(s), "/") {
		if part != "." && part != ".." {
			return false
		}
	}
	return true
}

func pathLike(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, ".") ||
		strings.Contains(s, "/")
}

func cleanPath(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		rest := path.Clean("/" + strings.TrimPrefix(s, "~"))
		if rest == "/" {
			return "~"
		}
		return "~" + rest
	}
	return path.Clean(s)
}

// operandMatch compares a rule operand with a command word.
func operandMatch(want, got string, glob bool) strength {
	if !pathLike(want) && !pathLike(got) {
		if want == got {
			return definite
		}
		if strings.ContainsAny(want, "*?[") {
			if ok, _ := path.Match(want, got); ok {
				return definite
			}
		}
		return none
	}
	w, g := cleanPath(want), cleanPath(got)
	if w == g {
		return definite
	}
	if strings.ContainsAny(want, "*?[") {
		if ok, _ := path.Match(w, g); ok {
			return definite
		}
	}
	if glob {
		// dir/* names everything in dir: for a rule about dir it is
		// the same target (rm -rf /* is rm -rf /).
		dir, base := path.Split(g)
		if base == "*" || base == ".*" || base == "**" {
			if dir == "" && w == "." || dir != "" && cleanPath(dir) == w {
				return definite
			}
		}
		if ok, _ := path.Match(g, w); ok {
			return possible
		}
	}
	return none
}

// matchRegex matches command(regex:RE) against the command's text after
// quote removal, with and without its environment assignments. A command
// that is not fully static never matches an allow regex: what a regex
// says about unknown text cannot be known.
func (r *Rule) matchRegex(c *call, cmd *shellparse.Command) strength {
	if r.Decision == Allow && !cmd.Static() {
		return none
	}
	bare := c.text()
	if r.c.re.MatchString(bare) {
		return definite
	}
	if len(cmd.Assigns) > 0 {
		var sb strings.Builder
		for _, a := range cmd.Assigns {
			sb.WriteString(a.Name)
			sb.WriteByte('=')
			sb.WriteString(quote(a.Value.Text))
			sb.WriteByte(' ')
		}
		sb.WriteString(bare)
		if r.c.re.MatchString(sb.String()) {
			return definite
		}
	}
	// A deny or ask regex that would match were each word not known
	// statically a plain word is a possible match: at least Ask.
	if r.Decision != Allow && !cmd.Static() && r.c.re.MatchString(c.plainText()) {
		return possible
	}
	return none
}

// plainText is text() with every word not known statically replaced by a
// plain word.
func (c *call) plainText() string {
	words := make([]shellparse.Word, len(c.words))
	for i, w := range c.words {
		if !w.Static {
			w = shellparse.Word{Text: "x", Static: true}
		}
		words[i] = w
	}
	return quoteJoin(words)
}

func quoteJoin(words []shellparse.Word) string {
	parts := make([]string, len(words))
	for i, w := range words {
		if w.Static {
			parts[i] = quote(w.Text)
		} else {
			parts[i] = w.Text
		}
	}
	return strings.Join(parts, " ")
}

// quote quotes a word for display when it would not read back as itself.
func quote(s string) string {
	if s == "" {
		return "''"
	}
	if !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// helpCall reports whether a command asks a help tool for help: its first
// word is help, or it has --help.
func helpCall(c *call) bool {
	for i, t := range c.toks {
		switch t.kind {
		case posTok:
			if i == 0 && t.text == "help" {
				return true
			}
		case flagTok:
			if t.long == "help" {
				return true
			}
		case wildTok:
			return false
		}
	}
	return false
}

// homeOperand compares a deny or ask rule's operand about ~ with a word
// that spells the home directory out (/home/me/.ssh is ~/.ssh). A rule
// about ~ itself, or ~/* (everything in it), also holds for the home
// directory's parents, and /root, which removing removes home too.
func homeOperand(want string, t tok, home string) strength {
	got := t.text
	if t.resolved != "" {
		got = t.resolved
	}
	if !strings.HasPrefix(got, "/") {
		return none
	}
	g := path.Clean(got)
	glob := t.word.Glob
	if glob {
		// /home/me/* names everything in /home/me.
		if dir, base := path.Split(g); base == "*" || base == ".*" {
			g = path.Clean(dir)
		}
	}
	w := cleanPath(want)
	for _, h := range []string{home, "/root"} {
		if h == "" {
			continue
		}
		if g == h || strings.HasPrefix(g, h+"/") {
			if s := operandMatch(want, "~"+strings.TrimPrefix(g, h), glob); s != none {
				return s
			}
		}
		if (w == "~" || w == "~/*") && g != "/" && strings.HasPrefix(h, g+"/") {
			return definite
		}
	}
	return none
}
