package agents

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/syntax"
)

// The agents' shell wrappers.
//
// An agent whose shell is shell mode does not hand it the command its
// tool call carried: it hands it a line of its own around that command.
// Deciding that whole line refuses every call (Claude Code's wrapper
// writes its working directory to a file outside the scope), and the hook
// saw only the command, so tickets would never match. Unwrap recognises
// exactly the wrapper's own parts, by parsing, and returns the wrapped
// command, which shell mode decides as the line. A line with anything more
// (a part appended, a source from elsewhere, a cwd file outside the temp
// directory) is no wrapper and is decided whole: fail closed.
//
// Each agent's file gives its form, read from the agent's own code.

// Wrapped is a command found inside an agent's wrapper.
type Wrapped struct {
	// Agent is the agent whose wrapper it is.
	Agent *Agent
	// Command is the command the agent's tool call carried.
	Command string
	// Shell is the shell that runs Command when the wrapper names one
	// (Codex's exec '<shell>' -c); "" when it is the line's own shell.
	Shell string
}

// wrapperLine is a line as the recognisers read it.
type wrapperLine struct {
	src    string
	lang   syntax.LangVariant
	f      *syntax.File
	getenv func(string) string
}

// Unwrap returns the command inside line when line is exactly one of the
// agents' wrappers, read as shell (the real shell's path or name) reads
// it. getenv says where the agents keep their files (HOME, TMPDIR, the
// agents' own variables).
func Unwrap(line, shell string, getenv func(string) string) (Wrapped, bool) {
	lang := syntax.LangBash
	if filepath.Base(shell) == "zsh" {
		lang = syntax.LangZsh
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(line), "")
	if err != nil {
		return Wrapped{}, false
	}
	r := &wrapperLine{src: line, lang: lang, f: f, getenv: getenv}
	for _, a := range All {
		if a.unwrap == nil {
			continue
		}
		if w, ok := a.unwrap(r); ok {
			w.Agent = a
			return w, true
		}
	}
	return Wrapped{}, false
}

// printer prints the parts of a wrapper; shell mode reads one line, so
// one printer and its buffer serve all.
var printer struct {
	sync.Mutex
	p *syntax.Printer
	b bytes.Buffer
}

// printed is the canonical text of a node: equal texts are equal syntax.
func printed(n syntax.Node) string {
	printer.Lock()
	defer printer.Unlock()
	if printer.p == nil {
		printer.p = syntax.NewPrinter()
	}
	printer.b.Reset()
	if err := printer.p.Print(&printer.b, n); err != nil {
		return "\x00" // never equal to a canonical part
	}
	return printer.b.String()
}

// canonical parses src (one statement) and prints it back: the form a
// recognised part must print as. It panics on a bad constant.
func canonical(src string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		panic("wrapper constant does not parse: " + src)
	}
	return printed(f.Stmts[0])
}

// safeWord are the characters a word may hold unquoted in an agent's
// quoting (Claude Code's jo, shell-quote): nothing in them expands.
var safeWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:=@+,-]+$`) })

// staticWord returns the value of a word that expands to itself: literal
// parts of safe characters, single quotes (not $'…') and double quotes
// holding only literal text with nothing that expands or escapes.
func staticWord(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !safeWord().MatchString(p.Value) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "$`\\!") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plainStmt reports whether s is a statement with nothing around its
// command: not negated, not in the background, no coprocess.
func plainStmt(s *syntax.Stmt) bool {
	return s != nil && !s.Negated && !s.Background && !s.Coprocess && !s.Disown
}

// callOf returns the words of a simple command without assignments, each
// as a static word, and its redirections; ok is false for anything else.
func callOf(s *syntax.Stmt) (args []string, ok bool) {
	c, isCall := s.Cmd.(*syntax.CallExpr)
	if !plainStmt(s) || !isCall || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	for _, w := range c.Args {
		v, ok := staticWord(w)
		if !ok {
			return nil, false
		}
		args = append(args, v)
	}
	return args, true
}

// redirTo returns the target of s's one redirection if it is op to a
// static word, with no file descriptor named.
func redirTo(s *syntax.Stmt, op syntax.RedirOperator) (string, bool) {
	if len(s.Redirs) != 1 {
		return "", false
	}
	r := s.Redirs[0]
	if r.Op != op || r.N != nil || r.Hdoc != nil {
		return "", false
	}
	return staticWord(r.Word)
}

// andOrParts splits an and-or list (the file's one statement) at its
// "&&": each part is the statements its "||" join. ok is false for
// anything but one plain and-or list.
func andOrParts(f *syntax.File) (parts [][]*syntax.Stmt, ok bool) {
	if len(f.Stmts) != 1 {
		return nil, false
	}
	var leaves []*syntax.Stmt
	var ops []syntax.BinCmdOperator
	var walk func(s *syntax.Stmt) bool
	walk = func(s *syntax.Stmt) bool {
		if !plainStmt(s) {
			return false
		}
		b, isBin := s.Cmd.(*syntax.BinaryCmd)
		if !isBin {
			leaves = append(leaves, s)
			return true
		}
		if len(s.Redirs) > 0 || b.Op != syntax.AndStmt && b.Op != syntax.OrStmt {
			return false
		}
		if !walk(b.X) {
			return false
		}
		ops = append(ops, b.Op)
		return walk(b.Y)
	}
	if !walk(f.Stmts[0]) {
		return nil, false
	}
	cur := []*syntax.Stmt{leaves[0]}
	for i, op := range ops {
		if op == syntax.AndStmt {
			parts = append(parts, cur)
			cur = nil
		}
		cur = append(cur, leaves[i+1])
	}
	return append(parts, cur), true
}

// lstat is os.Lstat; tests replace it.
var lstat = os.Lstat

// freshFile reports whether a wrapper's own write to p (`>|`) lands in
// p itself: p does not exist, or is a regular file with no other link.
// In a temp directory the agent can write, a link planted at the next
// cwd file's name would have `pwd -P >|` write a path of the agent's
// choosing (a directory named `x;curl …|sh`) into ~/.bashrc. A link made
// after this check is left to the run-time layer, which confines writes.
func freshFile(p string) bool {
	fi, err := lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}

// underAgentDir reports whether dir is <base>/<sub> for the agent's
// directory: the one its variable names, else <home>/<dot>.
func underAgentDir(dir, sub, fromEnv, home, dot string) bool {
	base := fromEnv
	if base == "" && home != "" {
		base = filepath.Join(home, dot)
	}
	return base != "" && filepath.IsAbs(base) && dir == filepath.Join(filepath.Clean(base), sub)
}

// tempDir is os.tmpdir() of Node on Linux and macOS.
func tempDir(getenv func(string) string) string {
	if d := strings.TrimRight(getenv("TMPDIR"), "/"); d != "" {
		return filepath.Clean(d)
	}
	return "/tmp"
}
