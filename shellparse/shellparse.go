// Package shellparse extracts the commands a shell command line would execute.
//
// Parse reads a line (or a whole script) in the bash dialect with mvdan.cc/sh
// and returns one Command for every program it could run: every part of lists
// and pipelines, subshells, brace groups, loop, if and case bodies (dead
// branches count), function bodies, command and process substitutions
// wherever they appear (arguments, assignments, parameter defaults,
// arithmetic, unquoted here-documents, redirection targets), and the inner
// commands of runners (env, sudo, xargs, find -exec, …) and nested shells
// (bash -c, eval, su -c, scripts fed to a shell on a here-document).
//
// Words are reduced to what the program receives: quotes removed, escapes
// resolved, $'…' decoded and literal brace expansions expanded. A word whose
// value depends on the environment or on another command is kept, marked not
// static, so a caller can refuse to trust it. Single-quoted text, quoted
// here-documents, comments and plain arguments are data and yield nothing.
//
// Parse never guesses: a line that does not parse is an error with its
// position, and a nested script that cannot be read (not static, not
// parseable, too deep) yields a Command whose Unknown field says why.
//
// Beyond the syntax tree it models what bash does to a line at run time:
//   - runners, kept as data in runners.go (which options each has, which
//     operand starts the command, whether the command is run through sh -c
//     as watch and ssh do, which options write files or change directory);
//     GNU parallel and sem; jiri runp;
//   - static scripts fed to a shell on a pipe (echo '…' | bash), a
//     here-document or a descriptor (bash /dev/fd/3 3<<<…), and the known
//     positional parameters of sh -c 'script' _ ARG;
//   - the points where bash evaluates a value again as code (arithmetic on
//     a variable not proven a number, ${x@P}, declare -n, printf -v, read,
//     BASH_ENV, hash -p, /dev/tcp, …, see reeval.go): the command is
//     Unknown, with the reason;
//   - shell commands visible in interpreter code (python -c, node -e, perl
//     -e, …, see interp.go), followed as nested scripts;
//   - zsh's own syntax, through ParseShell.
//
// Parse is bounded: a line longer than 1 MiB or nested deeper than 1000
// levels is refused with an error before it reaches the parser, and
// the cost of reading a line is linear in its length.
package shellparse

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how many nested scripts (bash -c, eval, $( ), …) are
// followed. Deeper scripts yield a Command with Unknown set.
const maxDepth = 16

// nestedBudget bounds the text of all nested scripts (bash -c, eval, …)
// read for one line, as a multiple of the line's length (plus 64 KiB).
const nestedBudget = 4

// maxWords bounds brace expansion so a tiny line cannot allocate millions of
// words: past it, for one word or a whole command, a word is kept
// unexpanded and marked not static.
const maxWords = 1 << 12

// Script is the result of parsing a command line.
type Script struct {
	// Commands lists every command that could execute, in source order
	// (outer before inner where they share a position).
	Commands []*Command
}

// Command is one program execution the line could perform.
type Command struct {
	// Args is the argv the program receives, after unwrapping runners:
	// for `sudo env FOO=1 git push`, Args is `git push`.
	// It is empty for a bare assignment or a bare redirection.
	Args []Word
	// Assigns are the environment assignments that apply to it, from
	// prefixes (`FOO=1 cmd`), runners (`env FOO=1 cmd`) or, with no Args,
	// the assignments the statement makes to the shell itself.
	Assigns []Assign
	// Decl is the declaration builtin (export, declare, local, readonly,
	// typeset) when the command is one.
	Decl string
	// Redirs are the redirections applying to the command, including those
	// inherited from enclosing blocks and runners' output files.
	Redirs []Redirect
	// Pos is where the command starts in its own source: the top-level
	// line, or the innermost nested script for nested commands.
	Pos Pos
	// Nesting is the chain of constructs that led to the command, outermost
	// first: substitutions, nested shells, runners and functions.
	Nesting []Frame
	// Unknown, when not empty, says why the command cannot be known
	// statically (a script read from standard input, a nested script that
	// is not static or does not parse, a runner whose options cannot be
	// read, the depth limit).
	Unknown string
	// Opaque reports that what Unknown is about is code the line shows
	// but that computes what it runs (subprocess.run(cmd) with cmd built
	// in the code): as opaque as a script file the line runs, and not
	// hidden by the shell line itself.
	Opaque bool
	// Source is the command's text as written in its own source.
	Source string
	// Dir is the working directory the command runs in when an earlier
	// cd on the line makes it known ("/", "/tmp", "~/src", or relative
	// to where the line starts: "cmd", ".."), else "".
	Dir string
	// Moved reports that the line itself chose Dir: an earlier cd, or a
	// runner's option (env -C), rather than the directory the line
	// starts in (which a caller may pass as Dir).
	Moved bool
	// DirUnknown reports that an earlier cd on the line moved to a
	// directory not known statically (cd "$d"): Dir is "" but the
	// command does not run where the line started.
	DirUnknown bool
	// Written are the paths the commands before it on the line write,
	// cleaned and joined to their Dir: write redirections, and what the
	// program table says a program writes (cp's destination, tee's files,
	// -o FILE). A command that runs one of them runs what the line wrote.
	Written []string
	// Stdin is what the command reads on standard input when the line
	// feeds it: the text of a here-document or here-string, or of a
	// static echo, printf or cat piped in (Static), or a word that is not
	// static when the line feeds it something it cannot show (a file, a
	// pipe from another program). Nil when the line leaves standard
	// input alone.
	Stdin *Word
	// Alias is the argv of another program the command runs as, whose
	// rules apply too: python -m pip install x is pip install x.
	Alias []Word
	// Network, when not empty, says how the command visibly reaches other
	// machines beyond what the program table knows of its program: the
	// interpreter code it runs imports an HTTP client, names a remote
	// URL, downloads a dataset (see interp.go).
	Network string
	// Shown is the file the command runs (sh x.sh, ./x.sh, python3 x.py)
	// when an earlier command of the line wrote it out with text it shows
	// (cat <<'EOF' > x.sh): what it runs was followed from that text.
	Shown string
	// Built are the paths of Written that only builds wrote (an output
	// option: gcc -o x, go build -o x) or edits in place (sed -i, perl
	// -i): the checkout's code, compiled or changed, not a file copied,
	// downloaded or written out by the line.
	Built []string
	// TableWrites reports that the files the program table says the
	// command writes (cp's destination, tee's files, sort -o F) are write
	// redirections in Redirs: the line was read, not only an argv.
	TableWrites bool
	// Vars are the assignments earlier commands of the line made to the
	// shell's variables (X=v, export X=v, declare X=v), in source order
	// and whatever their scope: what a later command may see of them.
	Vars []Assign
}

// Word is one argument after quote removal.
type Word struct {
	// Text is the value after quote removal when Static, else the word as
	// written (`$TARGET`, `"$(cat f)"`).
	Text string
	// Static reports that the value is fully known: no parameter, command,
	// arithmetic or process substitution.
	Static bool
	// Split reports that an unquoted expansion may turn the word into any
	// number of words, including none.
	Split bool
	// Glob reports that the word holds unquoted pathname-expansion
	// characters (*, ?, [ or an extended glob).
	Glob bool
}

// Assign is one variable assignment.
type Assign struct {
	Name   string
	Value  Word
	Append bool // +=
}

// RedirKind classifies a redirection.
type RedirKind int

const (
	// Read opens a file for reading, or feeds a here-document or here-string.
	Read RedirKind = iota
	// Write opens a file for writing (>, >>, >|, &>, <>, exec 3> f).
	Write
	// Dup duplicates or closes a file descriptor (2>&1, >&-).
	Dup
	// DevNull writes to /dev/null or another harmless device.
	DevNull
)

func (k RedirKind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	case Dup:
		return "fd-dup"
	case DevNull:
		return "/dev/null"
	}
	return fmt.Sprintf("RedirKind(%d)", int(k))
}

// Redirect is one redirection.
type Redirect struct {
	Op     string // the operator as written: ">", "2>>", "&>", "<<<"
	Target Word   // the file, fd or here-document body
	Kind   RedirKind
}

// Pos is a 1-based line and column.
type Pos struct {
	Line, Col int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Frame is one step of the nesting chain.
type Frame struct {
	// Kind names the construct: "$( )", "` `", "<( )", ">( )", "bash -c",
	// "eval", "here-doc", "sudo", "xargs", "find -exec", "function f", …
	Kind string
	// Pos is where the construct starts in its own source.
	Pos Pos
}

// Argv returns the command's arguments as strings (Text of each word).
func (c *Command) Argv() []string {
	out := make([]string, len(c.Args))
	for i, w := range c.Args {
		out[i] = w.Text
	}
	return out
}

// Static reports whether every word of the command, its assignments and its
// redirection targets are static and nothing about it is unknown.
func (c *Command) Static() bool {
	if c.Unknown != "" {
		return false
	}
	for _, w := range c.Args {
		if !w.Static {
			return false
		}
	}
	for _, a := range c.Assigns {
		if !a.Value.Static {
			return false
		}
	}
	for _, r := range c.Redirs {
		if !r.Target.Static {
			return false
		}
	}
	return true
}

// Program returns the program as written (the first word), or "".
func (c *Command) Program() string {
	if len(c.Args) == 0 {
		return ""
	}
	return c.Args[0].Text
}

// Name returns the basename of the program, or "" when there is none or it is
// not static.
func (c *Command) Name() string {
	if len(c.Args) == 0 || !c.Args[0].Static {
		return ""
	}
	return path.Base(c.Args[0].Text)
}

var parserPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}}

// Parse parses src in the bash dialect and returns every command it would
// execute. A syntax error is returned with its position ("1:6: reached EOF
// without closing quote `'`"). A line longer than 1 MiB or nested deeper
// than 1000 levels is refused with an error before it is parsed.
func Parse(src string) (*Script, error) {
	return parseAs(src, false)
}

// ParseShell is Parse for the shell that will run the line: shell is its
// name or path as configured (agentShim.shell, $AGENT_SHIM_SHELL), such
// as "zsh" or "/usr/bin/zsh". A zsh line is read in zsh's syntax, and
// what only zsh evaluates (glob qualifiers such as *(e:…:), expansion
// flags such as ${(e)x}, $~x, =(…) and =cmd) is reported as Unknown or
// followed, never taken as data. Any other shell, or "", is read as bash.
// Nested scripts are read in the dialect of the shell that runs them
// (bash -c inside a zsh line is bash).
func ParseShell(src, shell string) (*Script, error) {
	return parseAs(src, isZsh(shell))
}

// isZsh reports a shell name or path that runs zsh.
func isZsh(shell string) bool {
	return path.Base(strings.TrimSpace(shell)) == "zsh"
}

func parseAs(src string, zsh bool) (*Script, error) {
	f, err := parseDialect(src, zsh)
	if err != nil {
		return nil, err
	}
	w := &walker{budget: nestedBudget*len(src) + 1<<16}
	w.file(f, src, ctx{zsh: zsh})
	lineWrites(w.cmds)
	return &Script{Commands: w.cmds}, nil
}

// lineWrites sets each command's Written from the commands before it,
// and adds to its redirections the files the program table says it
// writes (see tableWrites).
func lineWrites(cmds []*Command) {
	var written, built []string
	var other map[string]bool // paths written otherwise than by a build
	for i, cmd := range cmds {
		if len(written) > 0 {
			cmd.Written = written[:len(written):len(written)]
		}
		if len(built) > 0 {
			cmd.Built = built[:len(built):len(built)]
		}
		n := len(cmd.Redirs)
		tableWrites(cmd)
		if i == len(cmds)-1 {
			break
		}
		add := func(t string, build bool) {
			if t == "" || t == "/dev/null" {
				return
			}
			if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && cmd.Dir != "" {
				t = path.Join(cmd.Dir, t)
			}
			t = path.Clean(t)
			written = append(written, t)
			switch {
			case build && !other[t] && !slices.Contains(built, t):
				built = append(built, t)
			case !build:
				if other == nil {
					other = map[string]bool{}
				}
				other[t] = true
				if slices.Contains(built, t) {
					built = slices.DeleteFunc(slices.Clone(built), func(b string) bool { return b == t })
				}
			}
		}
		// The line's own redirections; tableWrites added the table's
		// targets after them, read below with how each is written.
		for _, r := range cmd.Redirs[:n] {
			if r.Kind == Write && r.Target.Static {
				add(r.Target.Text, false)
			}
		}
		if len(cmd.Args) > 0 && cmd.Static() {
			ts := commandTargets(cmd.Args)
			if len(cmd.Alias) > 0 {
				ts = append(ts, commandTargets(cmd.Alias)...)
			}
			for _, t := range ts {
				if t.Static && !metadataOnly[path.Base(cmd.Args[0].Text)] {
					add(t.Path, t.Output || t.Edit)
				}
			}
		}
	}
}

var zshPool = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangZsh))
}}

func parseDialect(src string, zsh bool) (*syntax.File, error) {
	if !zsh {
		return parse(src)
	}
	if err := checkBounds(src); err != nil {
		return nil, err
	}
	p := zshPool.Get().(*syntax.Parser)
	defer zshPool.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

func parse(src string) (*syntax.File, error) {
	if err := checkBounds(src); err != nil {
		return nil, err
	}
	p := parserPool.Get().(*syntax.Parser)
	defer parserPool.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// Fields splits a single static command line, as a manifest holds it, into
// its words after quote removal. It refuses anything but one simple command
// of literal words: operators, expansions, redirections and assignments are
// errors.
func Fields(line string) ([]string, error) {
	if plain(line) {
		// Nothing the shell would read differently: split on blanks.
		return strings.Fields(line), nil
	}
	f, err := parse(line)
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) != 1 {
		return nil, fmt.Errorf("want one command, found %d", len(f.Stmts))
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, fmt.Errorf("%s: not a simple command", st.Pos())
	}
	var out []string
	for _, arg := range call.Args {
		words, ok := braces(arg)
		if !ok {
			return nil, fmt.Errorf("%s: brace expansion too large", arg.Pos())
		}
		for _, bw := range words {
			w := evalWord(bw, "")
			if !w.Static || w.Split {
				return nil, fmt.Errorf("%s: word is not literal", arg.Pos())
			}
			out = append(out, w.Text)
		}
	}
	return out, nil
}

// plain reports whether a line holds only characters the shell reads as
// themselves in a simple command: letters, digits, blanks and ._/:+,@%^~-
// (no quotes, escapes, expansions, operators, comments or assignments).
func plain(line string) bool {
	if strings.TrimSpace(line) == "" {
		return false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte(" \t._/:+,@%^-", c) >= 0:
		case c == '~' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
		default:
			return false
		}
	}
	return true
}

// ctx is what the walker carries down the tree.
type ctx struct {
	nesting []Frame
	redirs  []Redirect
	depth   int
	// stdin is the static text piped into the command (echo '…' | bash),
	// nil when unknown or there is no pipe.
	stdin *piped
	// params are the positional parameters of the script ($0, $1, …)
	// when known (sh -c 'script' arg0 arg1), else nil.
	params *params
	// zsh: the script is read and run by zsh.
	zsh bool
}

// piped is text a command reads on standard input. Only the first reader
// gets it: a later one is unknown.
type piped struct {
	text Word
	used bool
}

// params are a script's positional parameters. set and shift make them
// unknown for the rest of the script.
type params struct {
	words []Word // $0, $1, …
	valid bool
}

func (c ctx) push(f Frame) ctx {
	n := make([]Frame, len(c.nesting), len(c.nesting)+1)
	copy(n, c.nesting)
	c.nesting = append(n, f)
	return c
}

type walker struct {
	cmds []*Command
	// nums are the variables proven to hold a plain number (x=5, a
	// for loop over numbers, an arithmetic assignment), in source order.
	nums map[string]bool
	// ints are the variables declared with the integer attribute.
	ints map[string]bool
	// assoc are the associative arrays the line declares.
	assoc map[string]bool
	// skip is a command already reported: exec follows it without
	// reporting it again.
	skip *Command
	// funcs are the functions the line defines.
	funcs map[string]bool
	// budget is how many more bytes of nested scripts may be parsed.
	budget int
	// cwd is the working directory set by the last static cd, "" when
	// unknown. It follows source order and ignores subshell scoping, which
	// can only make a later relative path look more dangerous.
	cwd string
	// cdpath is set once the line sets CDPATH or turns on cdable_vars:
	// a relative cd then goes where they say.
	cdpath bool
	// cwdLost is set once a cd moved to a directory not known
	// statically (cd "$d", cd -) and no later cd made it known again.
	cwdLost bool
	// specialsLost is set once a command that may unset a variable ran
	// (unset, declare, eval, a function): RANDOM and the like are then
	// plain variables.
	specialsLost bool
	// vars are the assignments the line made to the shell so far (see
	// Command.Vars).
	vars []Assign
	// fds are the files `exec N<FILE` opened for the rest of the line,
	// by descriptor.
	fds map[int]Word
	// shown are the files the line wrote out with text it shows, by
	// path (see shown.go).
	shown map[string]Word
}

func pos(p syntax.Pos) Pos { return Pos{Line: int(p.Line()), Col: int(p.Col())} }

// source is one parsed text: top-level line or nested script.
type source struct {
	text string
}

func (s source) slice(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(s.text) || start > end {
		return ""
	}
	return s.text[start:end]
}

func (w *walker) file(f *syntax.File, text string, c ctx) {
	src := source{text: text}
	for _, st := range f.Stmts {
		w.stmt(st, src, c)
	}
}

// node walks any subtree, handing statements, substitutions and functions
// to their own handlers. Walking generically means no construct of the
// language is skipped by omission: every word in it is searched.
func (w *walker) node(n syntax.Node, src source, c ctx) {
	if word, ok := n.(*syntax.Word); ok && literal(word) {
		return // nothing to run in a plain word
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			w.stmt(x, src, c)
			return false
		case *syntax.CmdSubst:
			kind := "$( )"
			if x.Backquotes {
				kind = "` `"
			}
			w.subst(kind, x.Pos(), x.Stmts, src, c)
			return false
		case *syntax.ProcSubst:
			kind := "<( )"
			if x.Op == syntax.CmdOut {
				kind = ">( )"
			}
			w.subst(kind, x.Pos(), x.Stmts, src, c)
			return false
		case *syntax.FuncDecl:
			name := ""
			if x.Name != nil {
				name = x.Name.Value
			}
			inner := c.push(Frame{Kind: "function " + name, Pos: pos(x.Pos())})
			inner.redirs = nil
			inner.stdin = nil
			inner.params = &params{} // the function's own arguments
			if w.funcs == nil {
				w.funcs = map[string]bool{}
			}
			w.funcs[name] = true
			// The body runs when called, after anything: nothing
			// proven before it holds inside.
			saved := w.nums
			w.nums = nil
			w.stmt(x.Body, src, inner)
			w.nums = saved
			return false
		case *syntax.Subshell:
			inner := c.push(Frame{Kind: "( )", Pos: pos(x.Pos())})
			for _, st := range x.Stmts {
				w.stmt(st, src, inner)
			}
			return false
		case *syntax.DeclClause:
			w.decl(x, src, c)
			return false
		}
		return true
	})
}

// literal reports whether a word is made only of literal text, so that no
// command can hide in it.
func literal(word *syntax.Word) bool {
	for _, p := range word.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// subst walks the statements of a command or process substitution, which
// run in a subshell of their own: redirections outside do not apply.
func (w *walker) subst(kind string, p syntax.Pos, stmts []*syntax.Stmt, src source, c ctx) {
	inner := c.push(Frame{Kind: kind, Pos: pos(p)})
	inner.redirs = nil
	inner.stdin = nil
	for _, st := range stmts {
		w.stmt(st, src, inner)
	}
}

func (w *walker) stmt(st *syntax.Stmt, src source, c ctx) {
	if len(st.Redirs) > 0 {
		redirs := make([]Redirect, 0, len(c.redirs)+len(st.Redirs))
		redirs = append(redirs, c.redirs...)
		for i, r := range st.Redirs {
			redirs = append(redirs, redirect(r, src))
			if ps := outSubst(r); ps != nil {
				// echo '…' > >(bash): what the statement writes is
				// what the substitution reads.
				rest := *st
				rest.Redirs = append(append([]*syntax.Redirect(nil), st.Redirs[:i]...), st.Redirs[i+1:]...)
				if text, ok := pipeText(&rest, src); ok {
					w.fedSubst(ps, text, src, c)
					continue
				}
			}
			if r.Word != nil {
				w.node(r.Word, src, c)
			}
			if r.Hdoc != nil {
				w.node(r.Hdoc, src, c)
			}
		}
		c.redirs = redirs
	}
	switch x := st.Cmd.(type) {
	case nil:
		// A bare redirection such as `> file` still opens the file.
		w.emit(&Command{Redirs: c.redirs, Pos: pos(st.Pos()), Nesting: c.nesting, Source: src.slice(st)})
	case *syntax.CallExpr:
		text, file, shown := writtenText(st, src)
		w.call(x, src, c)
		if shown {
			if w.shown == nil {
				w.shown = map[string]Word{}
			}
			w.shown[w.shownPath(file)] = text
		}
	case *syntax.BinaryCmd:
		w.binary(x, src, c)
	case *syntax.ArithmCmd:
		w.evaluated(st, w.arith(x.X, c.params), src, c)
		w.node(x, src, c)
	case *syntax.LetClause:
		why := ""
		for _, e := range x.Exprs {
			if why == "" {
				why = w.arith(e, c.params)
			}
		}
		w.evaluated(st, why, src, c)
		w.node(x, src, c)
	case *syntax.TestClause:
		w.evaluated(st, w.testHazard(x.X, c.params), src, c)
		w.node(x, src, c)
	case *syntax.WhileClause:
		w.loopProofs(x)
		w.node(x, src, c)
	case *syntax.ForClause:
		switch loop := x.Loop.(type) {
		case *syntax.CStyleLoop:
			why := w.arith(loop.Init, c.params)
			w.loopProofs(x)
			if why == "" {
				why = w.arith(loop.Cond, c.params)
			}
			if why == "" {
				why = w.arith(loop.Post, c.params)
			}
			w.evaluated(st, why, src, c)
		case *syntax.WordIter:
			// for i in 1 2 3 proves i a number; anything else does not.
			num := len(loop.Items) > 0
			for _, it := range loop.Items {
				if !literal(it) || !isArithNumber(it.Lit()) {
					num = false
				}
			}
			if loop.Name != nil {
				w.setNum(loop.Name.Value, num)
			}
			w.loopProofs(x)
			why := ""
			for _, it := range loop.Items {
				if why == "" {
					why = w.wordHazard(it, c.params)
				}
			}
			w.evaluated(st, why, src, c)
		}
		w.node(x, src, c)
	case *syntax.TimeClause:
		// time -- cmd: the time keyword takes -- before the command.
		if x.Stmt != nil {
			if call, ok := x.Stmt.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 1 && call.Args[0].Lit() == "--" {
				st := *x.Stmt
				cp := *call
				cp.Args = call.Args[1:]
				st.Cmd = &cp
				w.stmt(&st, src, c)
				return
			}
		}
		w.node(x, src, c)
	default:
		w.node(x, src, c)
	}
}

// evaluated reports a compound command (( )), let, [[ ]] or a for loop
// that evaluates a value as code, when why says it does.
func (w *walker) evaluated(st *syntax.Stmt, why string, src source, c ctx) {
	if why == "" {
		return
	}
	w.emit(&Command{Redirs: c.redirs, Pos: pos(st.Pos()), Nesting: c.nesting, Source: src.slice(st), Unknown: why})
}

// testHazard checks a [[ ]] expression: -eq and the other arithmetic
// comparisons evaluate both sides, -v evaluates a subscript.
func (w *walker) testHazard(expr syntax.TestExpr, p *params) string {
	why := ""
	syntax.Walk(expr, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, side := range []syntax.TestExpr{x.X, x.Y} {
					if word, ok := side.(*syntax.Word); ok && why == "" {
						why = w.arithWord(word, p)
					}
				}
				return false
			}
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				if word, ok := x.X.(*syntax.Word); ok {
					if v := evalWord(word, ""); !plainName(v) {
						why = "[[ -v ]] evaluates the subscript of a name not known statically"
						if v.Static {
							why = fmt.Sprintf("[[ -v %s ]] evaluates its subscript", v.Text)
						}
					}
				}
				return false
			}
		case *syntax.Word:
			why = w.wordHazard(x, p)
			return false
		}
		return true
	})
	return why
}

// binary walks a chain of && || | |& without recursion: the parser builds
// a && b && c as ((a && b) && c), as deep as the chain is long.
func (w *walker) binary(b *syntax.BinaryCmd, src source, c ctx) {
	spine := []*syntax.BinaryCmd{b}
	for {
		x, ok := b.X.Cmd.(*syntax.BinaryCmd)
		if !ok || len(b.X.Redirs) > 0 {
			break
		}
		b = x
		spine = append(spine, b)
	}
	prev := spine[len(spine)-1].X
	first := c
	first.stdin = c.stdin
	w.stmt(prev, src, first)
	for i := len(spine) - 1; i >= 0; i-- {
		y := spine[i].Y
		yc := c
		yc.stdin = nil
		if op := spine[i].Op; op == syntax.Pipe || op == syntax.PipeAll {
			yc.stdin = &piped{}
			if t, ok := pipeText(prev, src); ok {
				yc.stdin.text = t
			} else {
				yc.stdin.used = true
			}
		} else {
			yc.stdin = c.stdin
		}
		w.stmt(y, src, yc)
		prev = y
	}
}

func (w *walker) emit(cmd *Command) {
	if cmd == w.skip {
		return // already reported as unknown
	}
	if len(w.vars) > 0 && cmd.Vars == nil {
		cmd.Vars = w.vars[:len(w.vars):len(w.vars)]
	}
	if cmd.Dir == "" && !cmd.DirUnknown {
		cmd.Dir = w.cwd
		cmd.DirUnknown = cmd.Dir == "" && w.cwdLost
		cmd.Moved = cmd.Moved || w.cwd != "" || w.cwdLost
	}
	if !w.cdpath {
		w.cdpath = setsCDPath(cmd)
	}
	w.forgetWritten(cmd)
	w.cmds = append(w.cmds, cmd)
}

// topLevel reports a word that is the output of git rev-parse
// --show-toplevel, quoted or not.
func topLevel(w string) bool {
	w = strings.Trim(w, `"`)
	inner, ok := strings.CutPrefix(w, "$(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	} else if inner, ok = strings.CutPrefix(w, "`"); ok {
		inner, ok = strings.CutSuffix(inner, "`")
	}
	return ok && strings.Join(strings.Fields(inner), " ") == "git rev-parse --show-toplevel"
}

// setsCDPath reports a command that sets CDPATH (for itself or the shell)
// or turns on cdable_vars, either of which sends a later cd NAME
// elsewhere.
func setsCDPath(cmd *Command) bool {
	for _, a := range cmd.Assigns {
		if a.Name == "CDPATH" {
			return true
		}
	}
	for i, a := range cmd.Args {
		if i == 0 {
			continue
		}
		if strings.HasPrefix(a.Text, "CDPATH") || strings.Contains(a.Text, "cdable_vars") || !a.Static && cmd.Args[0].Text == "shopt" {
			return true
		}
	}
	return false
}

// chdir follows cd and pushd so that later relative paths can be resolved.
func (w *walker) chdir(args []Word) {
	for len(args) > 0 && args[0].Static && strings.HasPrefix(args[0].Text, "-") && args[0].Text != "-" {
		args = args[1:] // -P, -L, -e, --
	}
	switch {
	case len(args) == 0:
		w.cwd, w.cwdLost = "~", false
	case !args[0].Static && topLevel(args[0].Text):
		// cd "$(git rev-parse --show-toplevel)": the top of the
		// repository the line starts in, the project's own.
		w.cwd, w.cwdLost = "", false
	case !args[0].Static || args[0].Text == "-" || args[0].Text == "":
		w.cwd, w.cwdLost = "", true
	default:
		d := args[0].Text
		switch {
		case d == "~" || strings.HasPrefix(d, "~/"):
			w.cwd = "~" + strings.TrimSuffix(path.Clean("/"+d[1:]), "/")
		case strings.HasPrefix(d, "/"):
			w.cwd = path.Clean(d)
		case w.cwd != "":
			w.cwd = path.Join(w.cwd, d)
		case w.cwdLost:
		case w.cdpath && d != "." && d != ".." && !strings.HasPrefix(d, "./") && !strings.HasPrefix(d, "../"):
			// CDPATH or cdable_vars may send cd hooks anywhere.
			w.cwdLost = true
		default:
			// Relative to where the line starts: cmd, .., ../other.
			w.cwd = path.Clean(d)
		}
		if w.cwd != "" {
			w.cwdLost = false
		}
	}
}

func (w *walker) call(x *syntax.CallExpr, src source, c ctx) {
	// Substitutions inside the words run before the command itself.
	for _, a := range x.Assigns {
		if a.Value == nil || a.Array != nil || a.Index != nil || !literal(a.Value) {
			w.node(a, src, c)
		}
	}
	tee := len(x.Args) > 0 && x.Args[0].Lit() == "tee" && c.stdin != nil && !c.stdin.used && c.stdin.text.Static
	for _, arg := range x.Args {
		if tee && len(arg.Parts) == 1 {
			// echo '…' | tee >(bash): tee writes its input into
			// the substitution.
			if ps, ok := arg.Parts[0].(*syntax.ProcSubst); ok && ps.Op == syntax.CmdOut {
				w.fedSubst(ps, c.stdin.text, src, c)
				continue
			}
		}
		w.node(arg, src, c)
	}
	var assigns []Assign
	why := ""
	for _, a := range x.Assigns {
		assigns = append(assigns, assign(a, src))
		if why == "" {
			why = w.assignHazard(a, c.params)
		}
		if why == "" && a.Value != nil {
			why = w.wordHazard(a.Value, c.params)
		}
	}
	for _, arg := range x.Args {
		if why == "" {
			why = w.wordHazard(arg, c.params)
		}
	}
	if why == "" {
		why = w.redirHazard(c.redirs)
	}
	cmd := &Command{Assigns: assigns, Redirs: c.redirs, Pos: pos(x.Pos()), Nesting: c.nesting, Source: src.slice(x), Unknown: why}
	cmd.Stdin = stdinOf(cmd.Redirs, c)
	w.expansions(cmd, c)
	if len(x.Args) == 0 {
		for _, a := range x.Assigns {
			w.noteAssign(a)
		}
		w.emit(cmd)
		w.prompts(cmd, c)
		w.vars = append(w.vars, assigns...)
		return
	}
	cmd.Args = argWords(x.Args, src, c.params)
	w.noteFds(cmd)
	if c.zsh {
		for _, arg := range x.Args {
			if why == "" {
				why = zshHazard(arg)
			}
		}
		cmd.Unknown = why
		// =cmd in program position is the path of cmd.
		if a := cmd.Args[0]; a.Static && len(a.Text) > 1 && a.Text[0] == '=' {
			cmd.Args = append([]Word{{Text: a.Text[1:], Static: true}}, cmd.Args[1:]...)
		}
	}
	// PS4='…' bash -x …: prompt variables reach the command too.
	w.prompts(cmd, c)
	if why != "" {
		// Report the command as unknown, and still follow what it
		// runs: a deny rule may match inside.
		w.emit(cmd)
		again := *cmd
		again.Unknown = ""
		w.skip = &again
		w.exec(&again, c)
		w.skip = nil
		w.afterCall(cmd)
		return
	}
	w.exec(cmd, c)
	w.afterCall(cmd)
}

// argWords evaluates a command's words, substituting positional
// parameters when they are known.
func argWords(args []*syntax.Word, src source, p *params) []Word {
	if p == nil || !p.valid {
		return words(args, src)
	}
	out := make([]Word, 0, len(args))
	for _, a := range args {
		if ws, ok := positional(a, p); ok {
			out = append(out, ws...)
			continue
		}
		out = append(out, words([]*syntax.Word{a}, src)...)
	}
	return out
}

// redirHazard checks redirections that reach the network.
func (w *walker) redirHazard(redirs []Redirect) string {
	for _, r := range redirs {
		t := r.Target.Text
		if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
			return fmt.Sprintf("%s%s opens a network connection", r.Op, t)
		}
		if !r.Target.Static && strings.Contains(t, "/dev/") {
			return fmt.Sprintf("%s%s may open a network connection", r.Op, t)
		}
	}
	return ""
}

func (w *walker) decl(x *syntax.DeclClause, src source, c ctx) {
	for _, a := range x.Args {
		w.node(a, src, c)
	}
	cmd := &Command{Decl: x.Variant.Value, Redirs: c.redirs, Pos: pos(x.Pos()), Nesting: c.nesting, Source: src.slice(x)}
	cmd.Args = append(cmd.Args, Word{Text: x.Variant.Value, Static: true})
	nameref, integer, assoc, why := false, false, false, ""
	for _, a := range x.Args {
		if a.Name == nil && a.Value != nil {
			if o := evalWord(a.Value, ""); o.Static && strings.HasPrefix(o.Text, "-") {
				nameref = nameref || strings.Contains(o.Text, "n")
				integer = integer || strings.Contains(o.Text, "i")
				assoc = assoc || strings.Contains(o.Text, "A")
			} else if !o.Static {
				// declare "$x": the name, the options, the value:
				// anything.
				why = fmt.Sprintf("%s %s: what it declares is not known", x.Variant.Value, o.Text)
			}
		}
	}
	for _, a := range x.Args {
		switch {
		case a.Name != nil && !a.Naked:
			cmd.Assigns = append(cmd.Assigns, assign(a, src))
		case a.Naked && a.Name != nil:
			cmd.Args = append(cmd.Args, Word{Text: a.Name.Value, Static: true})
		case a.Value != nil:
			cmd.Args = append(cmd.Args, words([]*syntax.Word{a.Value}, src)...)
		}
		if a.Name == nil {
			continue
		}
		if integer {
			if w.ints == nil {
				w.ints = map[string]bool{}
			}
			w.ints[a.Name.Value] = true
		}
		if assoc {
			// Keys of an associative array are strings, not
			// arithmetic.
			if w.assoc == nil {
				w.assoc = map[string]bool{}
			}
			w.assoc[a.Name.Value] = true
		}
		if why == "" && nameref {
			v := Word{}
			if a.Value != nil {
				v = evalWord(a.Value, "")
			}
			if a.Naked || a.Value == nil || !validName(v.Text) || !v.Static {
				why = fmt.Sprintf("%s -n makes %s a reference evaluated on use", x.Variant.Value, a.Name.Value)
			}
		}
		if why == "" {
			why = w.assignHazard(a, c.params)
		}
		if why == "" && a.Value != nil {
			why = w.wordHazard(a.Value, c.params)
		}
		if !a.Naked {
			w.noteAssign(a)
		}
	}
	cmd.Unknown = why
	w.expansions(cmd, c)
	w.emit(cmd)
	w.prompts(cmd, c)
	w.vars = append(w.vars, cmd.Assigns...)
}

// promptVars hold text the shell runs or expands later: PROMPT_COMMAND is
// run before each prompt, and the PS variables are expanded, command
// substitutions included (PS4 on every traced command after set -x).
var promptVars = map[string]bool{
	"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true,
}

// prompts follows the values of promptVars set by cmd as nested scripts.
func (w *walker) prompts(cmd *Command, c ctx) {
	for _, a := range cmd.Assigns {
		if promptVars[a.Name] {
			w.nested(a.Name+"=", a.Value, cmd, c)
		}
	}
}

func assign(a *syntax.Assign, src source) Assign {
	out := Assign{Append: a.Append}
	if a.Name != nil {
		out.Name = a.Name.Value
	}
	switch {
	case a.Array != nil || a.Index != nil:
		out.Value = Word{Text: src.slice(a), Static: false}
	case a.Value != nil:
		out.Value = evalWord(a.Value, src.slice(a.Value))
		out.Value.Split = false // assignments are not split
	default:
		out.Value = Word{Static: true}
	}
	return out
}

func redirect(r *syntax.Redirect, src source) Redirect {
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	out := Redirect{Op: op}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		out.Kind = Read
		if r.Hdoc != nil {
			out.Target = hdocWord(r.Hdoc, quotedDelim(r.Word), src)
		} else {
			out.Target = Word{Static: true}
		}
		return out
	case syntax.WordHdoc:
		out.Kind = Read
		out.Target = evalWord(r.Word, src.slice(r.Word))
		out.Target.Split = false
		return out
	}
	out.Target = evalWord(r.Word, src.slice(r.Word))
	out.Target.Split = false
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			// > >(cmd) writes into a pipe to cmd, whose commands are
			// walked: no file is written.
			out.Kind = Dup
			return out
		}
	}
	if out.Target.Glob && out.Target.Static {
		// bash expands a pattern in a redirection target to the one
		// file it names (> .git/confi[g] writes .git/config): which
		// file is not known statically. Text keeps the pattern.
		out.Target.Static = false
	}
	switch r.Op {
	case syntax.RdrIn:
		out.Kind = Read
	case syntax.DplIn:
		out.Kind = Dup
	case syntax.DplOut:
		// >&2 and >&- duplicate; >&file (bash) writes both streams to file.
		if out.Target.Static && isFd(out.Target.Text) {
			out.Kind = Dup
		} else {
			out.Kind = writeKind(out.Target)
		}
	default: // >, >>, >|, <>, &>, &>>
		out.Kind = writeKind(out.Target)
	}
	return out
}

func isFd(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // >&-
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// harmless are device files a redirection may write without writing a file.
var harmless = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/fd/1": true, "/dev/fd/2": true,
}

func writeKind(target Word) RedirKind {
	if target.Static && harmless[target.Text] {
		return DevNull
	}
	return Write
}

func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// hdocWord evaluates a here-document body: literal when the delimiter is
// quoted, else with \$, \`, \\ and \newline resolved and any expansion
// making it not static.
func hdocWord(body *syntax.Word, quoted bool, src source) Word {
	var sb, text strings.Builder
	static := true
	for _, p := range body.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if quoted {
				sb.WriteString(x.Value)
			} else {
				sb.WriteString(unescape(x.Value, "$`\\\n"))
			}
			text.WriteString(x.Value)
		default:
			static = false
			text.WriteString(src.slice(p))
		}
	}
	if !static {
		return Word{Text: text.String(), Static: false}
	}
	return Word{Text: sb.String(), Static: true}
}

// words evaluates a command's argument words, expanding literal braces.
func words(args []*syntax.Word, src source) []Word {
	out := make([]Word, 0, len(args))
	for _, arg := range args {
		text := src.slice(arg)
		if !hasBrace(arg) {
			out = append(out, evalWord(arg, text))
			continue
		}
		expanded, ok := braces(arg)
		if !ok || len(out)+len(expanded) > maxWords {
			// Too many words to read one by one: the command is
			// as unknown as an expansion.
			out = append(out, Word{Text: text, Split: true})
			continue
		}
		for _, bw := range expanded {
			out = append(out, evalWord(bw, text))
		}
	}
	return out
}

// braces performs literal brace expansion ({a,b}, {1..3}) on a word. It
// is written here rather than taken from mvdan.cc/sh/v3/expand, which
// links os/user and so makes the binary dynamically linked: several
// milliseconds of start-up on every agent command.
func braces(arg *syntax.Word) ([]*syntax.Word, bool) {
	if !hasBrace(arg) {
		return []*syntax.Word{arg}, true
	}
	// SplitBraces rewrites the word in place; work on a shallow copy so
	// the tree keeps its shape for later walks.
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), arg.Parts...)}
	if !syntax.SplitBraces(cp) {
		return []*syntax.Word{arg}, true
	}
	var out []*syntax.Word
	ok := expandBraces(cp.Parts, nil, func(parts []syntax.WordPart) bool {
		if len(out) >= maxWords {
			return false
		}
		out = append(out, &syntax.Word{Parts: parts})
		return true
	})
	return out, ok
}

// expandBraces yields every word that parts (with prefix already expanded
// before them) expands to; it stops when yield returns false.
func expandBraces(parts, prefix []syntax.WordPart, yield func([]syntax.WordPart) bool) bool {
	for i, p := range parts {
		br, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		left := append(append([]syntax.WordPart(nil), prefix...), parts[:i]...)
		rest := parts[i+1:]
		if br.Sequence {
			seq, ok := sequence(br)
			if !ok {
				return false
			}
			for _, v := range seq {
				if !expandBraces(rest, append(append([]syntax.WordPart(nil), left...), &syntax.Lit{Value: v}), yield) {
					return false
				}
			}
			return true
		}
		for _, elem := range br.Elems {
			next := append(append([]syntax.WordPart(nil), elem.Parts...), rest...)
			if !expandBraces(next, left, yield) {
				return false
			}
		}
		return true
	}
	return yield(append(append([]syntax.WordPart(nil), prefix...), parts...))
}

// sequence expands {from..to[..incr]} of integers (zero-padded when an end
// is) or single characters, as bash does. ok is false past maxWords.
func sequence(br *syntax.BraceExp) ([]string, bool) {
	fromLit, toLit := br.Elems[0].Lit(), br.Elems[1].Lit()
	chars := false
	from, err1 := strconv.ParseInt(fromLit, 10, 64)
	to, err2 := strconv.ParseInt(toLit, 10, 64)
	if err1 != nil || err2 != nil {
		if len(fromLit) == 0 || len(toLit) == 0 {
			return nil, false
		}
		chars = true
		from, to = int64(fromLit[0]), int64(toLit[0])
	}
	width := 0
	if !chars && (leadingZero(fromLit) || leadingZero(toLit)) {
		width = max(len(fromLit), len(toLit))
	}
	incr := int64(1)
	if len(br.Elems) > 2 {
		if n, _ := strconv.ParseInt(br.Elems[2].Lit(), 10, 64); n != 0 {
			incr = max(n, -n)
		}
	}
	if from > to {
		incr = -incr
	}
	if n := (to-from)/incr + 1; n > maxWords || n < 0 {
		return nil, false
	}
	var out []string
	for n := from; (incr > 0 && n <= to) || (incr < 0 && n >= to); n += incr {
		switch {
		case chars:
			out = append(out, string(rune(n)))
		case width > 0:
			out = append(out, fmt.Sprintf("%0*d", width, n))
		default:
			out = append(out, strconv.FormatInt(n, 10))
		}
	}
	return out, true
}

func leadingZero(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0'
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsRune(l.Value, '{') {
			return true
		}
	}
	return false
}

// evalWord performs quote removal on a word. text is the word as written,
// used for words that are not static.
func evalWord(word *syntax.Word, text string) Word {
	if len(word.Parts) == 1 {
		// Fast path: one plain literal or single-quoted string.
		switch x := word.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsRune(x.Value, '\\') {
				return Word{Text: x.Value, Static: true, Glob: hasGlob(x.Value)}
			}
		case *syntax.SglQuoted:
			if !x.Dollar {
				return Word{Text: x.Value, Static: true}
			}
		}
	}
	var sb strings.Builder
	out := Word{Static: true}
	open := false // an unquoted [ whose ] may come in a later literal
	for i, p := range word.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if hasGlob(x.Value) || open && strings.Contains(x.Value, "]") {
				out.Glob = true
			}
			if strings.Contains(x.Value, "[") {
				open = true
			}
			sb.WriteString(unescape(x.Value, ""))
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					sb.WriteString(unescape(l.Value, "$`\"\\\n"))
				} else {
					out.Static = false
				}
			}
		case *syntax.ExtGlob:
			out.Glob = true
			sb.WriteString(x.Op.String() + x.Pattern.Value + ")")
		case *syntax.ParamExp:
			out.Static = false
			// ${#x}, $? and $# expand to one number; anything else may split.
			if !(x.Length || (x.Param != nil && (x.Param.Value == "?" || x.Param.Value == "#" || x.Param.Value == "$"))) {
				out.Split = true
			}
		case *syntax.CmdSubst, *syntax.ArithmExp:
			out.Static = false
			out.Split = true
		case *syntax.ProcSubst:
			// Expands to one /dev/fd path.
			out.Static = false
		default:
			out.Static = false
			out.Split = true
		}
		_ = i
	}
	if !out.Static {
		out.Text = text
		if out.Text == "" {
			out.Text = sb.String()
		}
		return out
	}
	out.Text = sb.String()
	return out
}

// hasGlob reports whether an unquoted literal has an unescaped glob character.
func hasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			// A bracket with no closing one matches itself: [ is the
			// test builtin, not a pattern.
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// unescape resolves backslashes. With only == "" (unquoted text) a backslash
// quotes any character; inside double quotes and here-documents it quotes
// only the characters in only and is kept otherwise.
func unescape(s, only string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			sb.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		if only != "" && !strings.ContainsRune(only, rune(next)) {
			sb.WriteByte('\\')
			continue
		}
		i++
		if next == '\n' {
			continue // line continuation
		}
		sb.WriteByte(next)
	}
	return sb.String()
}

// ansiC decodes the body of a $'…' string as bash does.
func ansiC(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '\\', '\'', '"', '?':
			sb.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			n, j := 0, i+1
			for ; j < len(s) && j-i-1 < max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(e)
				continue
			}
			if e == 'x' {
				sb.WriteByte(byte(n))
			} else {
				sb.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for ; j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			sb.WriteByte(byte(n))
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
	// bash stops at a NUL byte.
	out, _, _ := strings.Cut(sb.String(), "\x00")
	return out
}

func isHex(b byte) bool {
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

func hexVal(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return int(b - '0')
	case b >= 'a' && b <= 'f':
		return int(b-'a') + 10
	default:
		return int(b-'A') + 10
	}
}
