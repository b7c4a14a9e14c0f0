package matcher

import (
	"fmt"
	"path"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
	"mvdan.cc/sh/v3/syntax"
)

// A program outside the knowledge table may run what it is given: poetry
// run, uv run, conda run, bundle exec, nix-shell --run, watchexec, socat
// EXEC:, sqlite3's .shell, a REPL's system(…). There will always be
// another one, so the table is not the only defence: the arguments of a
// program the table does not describe (no block of its own, or a block
// with the runner fact) are read as the commands they may be, the way a
// runner would read them:
//
//   - a tail of its words (`rm -rf /` in `uv run -- rm -rf /`), from each
//     word that could be a program a rule or a runner cares about;
//   - each word as a command line (`rm -rf /` in `capsh -c 'rm -rf /'`),
//     and the parts of it that a language may run: what follows an
//     escape or a first word (`.shell CMD`, `\! CMD`, `!CMD`, `system
//     CMD`), what follows a prefix (`EXEC:CMD`, `--exec=CMD`), quoted
//     strings and braced text (`system("CMD")`, `\write18{CMD}`);
//   - the text fed to it on standard input, as a script and line by line.
//
// Only a reading the policy denies counts: everything else about it is a
// guess that would only add friction. A denied reading is certain, and
// the command denied, when the words say the program runs it: a tail after
// a word that asks for it (run, exec, x, dlx, --, -c, --exec, --run,
// --command, an option ending -exec or -command), or after NAME=VALUE
// assignments (cross-env A=1 CMD); a whole word that is such an option's
// value (attached or not) or follows EXEC: or SYSTEM:. Any other denied
// reading makes the command at least ask, with the reason.

// maxTails bounds how many tails of one command are read: past it the
// command is asked about rather than read in part.
const maxTails = 16

// maxReadDepth is how deep in nested command lines arguments are read.
const maxReadDepth = 1

// maxTailSize bounds the text of one tail that is read: a longer one is
// asked about rather than read (a line of 100,000 words would otherwise
// be decided as several commands of 100,000 arguments).
const maxTailSize = 64 << 10

// readArgs reads the arguments of cmd as commands when its program is
// one the table does not describe (see above). It returns the deny rule
// of the first denied reading (a certain one if any), the reading's text
// and whether it is certain; or why the arguments could not all be read.
func (p *Policy) readArgs(c *call, cmd *shellparse.Command, depth int) (r *Rule, text string, certain bool, why string) {
	if depth > maxReadDepth || len(cmd.Args) == 0 || !cmd.Args[0].Static || c.prog == "" {
		return nil, "", false, ""
	}
	runner := c.block.RunnerFact() != nil
	if c.block.Reviewed() && !runner || quiet[c.prog] || shellparse.RunsCommand(c.prog) {
		// Described, or a runner package shellparse reads itself: what
		// it runs was reported as commands of their own (and at run
		// time, each is decided when it runs).
		return nil, "", false, ""
	}
	hasArgs := len(cmd.Args) > 1 || len(cmd.Assigns) > 0
	hasInput := cmd.Stdin != nil && cmd.Stdin.Static && strings.TrimSpace(cmd.Stdin.Text) != ""
	if !hasArgs && !hasInput {
		return nil, "", false, ""
	}
	rd := &reader{p: p, cmd: cmd, depth: depth, budget: 1 << 16}
	args := cmd.Args[1:]
	size := 0
	for _, a := range args {
		size += len(a.Text) + 1
	}
	rd.budget += 2 * size
	marked := runner // a word asking for the command to run was seen
	tails := 0
	for i, a := range args {
		if !a.Static {
			continue
		}
		t := a.Text
		if programWord(t) && rd.worth(t) {
			tails++
			if tails > maxTails {
				return rd.best, rd.text, false, fmt.Sprintf("its arguments name more commands than are read (%d)", maxTails)
			}
			if size > maxTailSize {
				return rd.best, rd.text, false, fmt.Sprintf("its arguments name a command, and are too long (%d bytes) to read for it", size)
			}
			if rd.tail(args[i:], marked || assignedBefore(args[:i])) {
				return rd.best, rd.text, true, ""
			}
		}
		prev := ""
		if i > 0 && args[i-1].Static {
			prev = args[i-1].Text
		}
		if rd.word(t, lineOption(prev)) {
			return rd.best, rd.text, true, ""
		}
		if runWord(t) || lineOption(t) {
			marked = true
		}
		if rd.budget < 0 {
			break
		}
	}
	// Values the line gives it in its environment may be command lines
	// it runs (MYTOOL_HOOK='…' mytool): read as words.
	for _, a := range cmd.Assigns {
		if rd.best == nil && a.Value.Static && rd.budget >= 0 {
			rd.word(a.Value.Text, false)
		}
	}
	if hasInput && rd.best == nil {
		in := cmd.Stdin.Text
		rd.script(in, false)
		for _, line := range strings.Split(in, "\n") {
			if rd.best != nil || rd.budget < 0 {
				break
			}
			rd.word(strings.TrimSpace(line), false)
		}
	}
	if rd.budget < 0 && rd.best == nil {
		return nil, "", false, "its arguments are too long to read for the commands they may run"
	}
	return rd.best, rd.text, false, ""
}

// quiet are programs outside the table that never run their arguments:
// shell builtins that print, test or set.
var quiet = map[string]bool{
	"printf": true, "echo": true, "test": true, "[": true, "true": true, "false": true, ":": true,
	"read": true, "export": true, "declare": true, "local": true, "readonly": true, "typeset": true,
	"unset": true, "shift": true, "set": true, "exit": true, "return": true, "cd": true, "pushd": true,
	"popd": true, "dirs": true, "pwd": true, "type": true, "hash": true, "help": true, "history": true,
	"jobs": true, "wait": true, "umask": true, "ulimit": true, "getopts": true, "shopt": true,
	"sleep": true, "seq": true, "yes": true,
}

// reader holds the state of one command's readings.
type reader struct {
	p      *Policy
	cmd    *shellparse.Command
	depth  int
	budget int
	best   *Rule // the deny rule of the first denied reading
	text   string
	seen   map[string]bool
}

// worth reports whether a command whose program is word could be denied
// or could run one that is: a program with deny rules, or one that runs
// another (a shell, a runner). Reading every tail of a long command would
// cost its length squared.
func (rd *reader) worth(word string) bool {
	name := programs.Name(word)
	return rd.p.mayDeny(name) || shellparse.RunsCommand(name)
}

// tail reads words as the command they spell; it reports a certain deny.
func (rd *reader) tail(words []shellparse.Word, sure bool) bool {
	var sb strings.Builder
	for i, w := range words {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if !w.Static {
			sb.WriteString(w.Text) // as written: its expansion stays unknown
			continue
		}
		if w.Glob && globSafe(w.Text) {
			sb.WriteString(w.Text) // a pattern stays one: rm -rf *
			continue
		}
		q, err := syntax.Quote(w.Text, syntax.LangBash)
		if err != nil {
			q = quote(w.Text)
		}
		sb.WriteString(q)
	}
	return rd.script(sb.String(), sure)
}

// word reads one word as a command line and the parts of it a language
// may run; whole says the word is the value of an option that takes a
// command line. It reports a certain deny.
func (rd *reader) word(t string, whole bool) bool {
	if t == "" || plainWord(t) && !rd.worth(t) {
		return false // one plain word: a command only if a rule names it
	}
	for _, part := range wordParts(t) {
		if rd.budget < 0 {
			return false
		}
		sure := whole && part.whole || part.marked
		if rd.worthText(part.text) && rd.script(part.text, sure) {
			return true
		}
	}
	return false
}

// worthText reports whether some word of a candidate command line could
// be a program worth reading (see worth), or the text chains commands.
func (rd *reader) worthText(s string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '|' || r == '&' || r == '(' || r == ')' ||
			r == '{' || r == '}' || r == '!' || r == '`' || r == '"' || r == '\'' || r == '$'
	}) {
		if programWord(f) && rd.worth(f) {
			return true
		}
	}
	return false
}

// script decides text as a command line run where the command runs; a
// denied reading is recorded. It reports a certain deny.
func (rd *reader) script(text string, sure bool) bool {
	if rd.seen[text] {
		return false
	}
	if rd.seen == nil {
		rd.seen = map[string]bool{}
	}
	rd.seen[text] = true
	if rd.budget -= len(text); rd.budget < 0 {
		return false
	}
	s, err := shellparse.Parse(text)
	if err != nil {
		return false // not a command line: nothing runs it as one
	}
	for _, c := range s.Commands {
		if c.Dir == "" && !c.DirUnknown {
			c.Dir, c.DirUnknown, c.Moved = rd.cmd.Dir, rd.cmd.DirUnknown, rd.cmd.Moved
		}
	}
	res := rd.p.decideScript(s, rd.depth+1)
	if res.Decision != Deny {
		// A deny rule a word not known statically may complete (rm -rf
		// "$X") is a guess however sure the reading is.
		for _, v := range res.Commands {
			if rd.best == nil && v.Decision == Ask && v.Rule != nil && v.Rule.Decision == Deny {
				rd.best, rd.text = v.Rule, strings.Join(v.Argv, " ")
			}
		}
		return false
	}
	for _, v := range res.Commands {
		if v.Decision == Deny {
			if rd.best == nil || sure {
				rd.best, rd.text = v.Rule, strings.Join(v.Argv, " ")
			}
			break
		}
	}
	return sure
}

// globSafe reports a pattern that the shell reads as itself but for its
// pattern characters: letters, digits, ./_-~ and * ? [ ].
func globSafe(t string) bool {
	for i := 0; i < len(t); i++ {
		b := t[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("./_-~*?[]", b) >= 0) {
			return false
		}
	}
	return t != ""
}

// part is a piece of a word that may be a command line: whole when it is
// the word itself (or all of it after an escape or a prefix), marked when
// a prefix says it is one (EXEC:, SYSTEM:, --exec=).
type part struct {
	text          string
	whole, marked bool
}

// wordParts returns the pieces of a word worth reading as command lines.
func wordParts(t string) []part {
	out := []part{{text: t, whole: true}}
	var add func(s string, whole, marked bool)
	add = func(s string, whole, marked bool) {
		s = strings.TrimSpace(s)
		if s == "" || len(out) >= 32 {
			return
		}
		for _, o := range out {
			if o.text == s {
				return
			}
		}
		out = append(out, part{text: s, whole: whole, marked: marked})
		// An escape: !CMD, :!CMD, |CMD, +!CMD.
		if e := strings.TrimLeft(s, ":!|+ \t"); e != s {
			add(e, whole, marked)
		}
	}
	if e := strings.TrimLeft(t, ":!|+ \t"); e != t {
		add(e, true, false)
	}
	// An editor's range before the escape: 1,$!CMD, .!CMD, r !CMD.
	if i := strings.IndexByte(t, '!'); i > 0 && i <= 16 && strings.Trim(t[:i], "0123456789,.$;%'+-/ rweRWE") == "" {
		add(t[i+1:], false, false)
	}
	// A prefix: EXEC:CMD, SYSTEM:CMD, --exec=CMD, exec=CMD.
	if i := strings.IndexAny(t, ":="); i > 0 && prefixName(t[:i]) {
		name := strings.ToLower(strings.TrimLeft(t[:i], "-"))
		add(t[i+1:], true, lineOption("--"+name) || name == "system" || name == "sh")
	}
	// A first word that is the language's own command: .shell CMD,
	// \! CMD, system CMD, shell CMD.
	if f, rest, ok := strings.Cut(strings.TrimSpace(t), " "); ok && !strings.ContainsAny(f, "\"'") {
		add(rest, false, false)
	}
	// Quoted strings, braced and bracketed text: system("CMD"),
	// \write18{CMD}, os:cmd("CMD"). An opener with no closer after it
	// ends the search for that closer: the scan stays linear.
	var none [256]bool
	for i := 0; i < len(t) && len(out) < 32; i++ {
		closer := byte(0)
		switch t[i] {
		case '"', '\'', '`':
			closer = t[i]
		case '{':
			closer = '}'
		case '[':
			closer = ']'
		case '(':
			closer = ')' // execute(CMD)
		}
		if closer == 0 || none[closer] {
			continue
		}
		end := strings.IndexByte(t[i+1:], closer)
		if end < 0 {
			none[closer] = true
			continue
		}
		{
			body := t[i+1 : i+1+end]
			add(body, false, false)
			if closer == ']' || closer == ')' {
				if argv, ok := stringList(body); ok {
					add(argv, false, false) // ['git', 'push', '-f']
				}
			}
			if closer == t[i] {
				i += end + 1 // past a quoted string
			}
		}
	}
	return out
}

// prefixName reports a word before : or = that names what follows: a
// letter, then letters, digits, - and _ (EXEC, --exec, sh-exec).
func prefixName(s string) bool {
	s = strings.TrimLeft(s, "-")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// plainWord reports a word of letters, digits and ._/@%+,- only: nothing
// in it can be a command line but the word itself.
func plainWord(t string) bool {
	for i := 0; i < len(t); i++ {
		b := t[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("._/@%+,-", b) >= 0) {
			return false
		}
	}
	return true
}

// programWord reports a word that could name a program: no blank, no
// quote or shell syntax, not an option, not an assignment.
func programWord(t string) bool {
	if t == "" || t[0] == '-' || t[0] == '+' {
		return false
	}
	for i := 0; i < len(t); i++ {
		b := t[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("._-+/~@:", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// assignedBefore reports NAME=VALUE words just before a tail: env's way
// of giving a command (cross-env NODE_ENV=test CMD).
func assignedBefore(words []shellparse.Word) bool {
	if len(words) == 0 {
		return false
	}
	name, _, ok := strings.Cut(words[len(words)-1].Text, "=")
	return ok && validVar(name) && !strings.HasPrefix(name, "-")
}

// runWord reports a word after which a runner's words are the command it
// runs: poetry run, bundle exec, mise x, pnpm dlx, and the end of options.
func runWord(t string) bool {
	switch t {
	case "run", "exec", "x", "dlx", "--":
		return true
	}
	return false
}

// lineOption reports an option whose value is a command line the program
// runs: -c, --exec, --run, --command, --cmd, and long options ending
// -exec, -command, -cmd or -run (ncat --sh-exec, --on-change-command).
func lineOption(t string) bool {
	if t == "-c" {
		return true
	}
	name, ok := strings.CutPrefix(t, "--")
	if !ok || name == "" {
		return false
	}
	name, _, _ = strings.Cut(strings.ToLower(name), "=")
	switch name {
	case "exec", "run", "command", "cmd":
		return true
	}
	for _, s := range []string{"-exec", "-command", "-cmd", "-run"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// mayDeny reports whether a deny rule could match a command of this
// program: one filed under its name, or one that may match any program
// (command(*), a regex grant with no key). A regex grant keyed by a word
// (see grantKey) does not make a reading worth making, so that what is
// read does not depend on the index; what is read is decided by every
// rule. A section that cannot be read counts as a deny rule (fail
// closed: the reading is made).
func (p *Policy) mayDeny(name string) bool {
	if name == "" || name == "." || strings.Contains(name, "/") {
		return false
	}
	name = path.Base(name)
	if p.lazy != nil {
		p.lazy.mu.Lock()
		defer p.lazy.mu.Unlock()
		if p.need(name) != nil {
			return true
		}
	}
	for _, r := range p.byProg[name] {
		if r.Decision == Deny {
			return true
		}
	}
	for _, r := range p.global {
		if r.Decision == Deny && r.key == "" {
			return true
		}
	}
	return false
}

// lessCommands returns the command lines a value of LESS runs: less reads
// it as options, and +!CMD (or +|CMD, piping to CMD) runs CMD. What follows
// the escape is taken to the end of the value: less's own reading of the
// option's end is not needed to see what it may run.
func lessCommands(v string) []string {
	var out []string
	for i := 0; i+1 < len(v); i++ {
		if v[i] != '+' || i > 0 && v[i-1] != ' ' && v[i-1] != '\t' {
			continue
		}
		rest := v[i+1:]
		if j := strings.IndexAny(rest, "!|"); j >= 0 && !strings.ContainsAny(rest[:j], " \t") {
			cmd := rest[j+1:]
			if rest[j] == '|' && cmd != "" {
				cmd = cmd[1:] // +|m: the mark letter
			}
			out = append(out, cmd)
		}
	}
	return out
}

// stringList reads a list of quoted strings ('a', "b") as the words of a
// command line, each quoted for the shell.
func stringList(body string) (string, bool) {
	var words []string
	for _, item := range strings.Split(body, ",") {
		item = strings.TrimSpace(item)
		if len(item) < 2 || (item[0] != '\'' && item[0] != '"') || item[len(item)-1] != item[0] {
			return "", false
		}
		q, err := syntax.Quote(item[1:len(item)-1], syntax.LangBash)
		if err != nil {
			return "", false
		}
		words = append(words, q)
	}
	return strings.Join(words, " "), len(words) > 0
}
