package shellparse

import (
	"fmt"
	"path"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"mvdan.cc/sh/v3/syntax"
)

// This file follows what a line sets up for later: what a command reads
// on standard input, values the shell expands again when it uses them
// (BASH_ENV, ENV), descriptors a line opens and later runs a program
// through, and text written into a process substitution that a shell
// reads.

// stdinOf returns what a command reads on standard input (see
// Command.Stdin): its last redirection of descriptor 0, else what the
// pipe before it carries.
func stdinOf(redirs []Redirect, c ctx) *Word {
	for i := len(redirs) - 1; i >= 0; i-- {
		r := redirs[i]
		n, op := redirFd(r.Op)
		if n != 0 {
			continue
		}
		switch {
		case op == "<<" || op == "<<-":
			t := r.Target
			return &t
		case op == "<<<":
			t := r.Target
			if t.Static {
				t.Text += "\n"
			}
			return &t
		case r.Target.Static && harmless[r.Target.Text]:
			return &Word{Static: true} // < /dev/null: nothing to read
		}
		return &Word{Text: r.Op + r.Target.Text}
	}
	if c.stdin != nil {
		if c.stdin.used || !c.stdin.text.Static {
			return &Word{Text: "(a pipe)"}
		}
		t := c.stdin.text
		return &t
	}
	return nil
}

// expansions follows what the shell expands again in the values of the
// variables it runs a file from: bash expands BASH_ENV (parameters,
// command substitution, arithmetic) before it reads the file, an
// interactive sh expands ENV. BASH_ENV='$(rm -rf /)' runs rm -rf /.
func (w *walker) expansions(cmd *Command, c ctx) {
	for _, a := range cmd.Assigns {
		switch {
		case (a.Name == "BASH_ENV" || a.Name == "ENV") && a.Value.Static && strings.ContainsAny(a.Value.Text, "$`"):
			w.document(a.Name+"=", a.Value, cmd, c)
		case a.Name == "BASH_ENV" || a.Name == "ENV":
			// BASH_ENV=<(printf 'CMD'): the shell sources that text.
			if text, ok := procScript(a.Value); ok {
				w.nested(a.Name+"=", text, cmd, c)
			}
		case strings.HasPrefix(a.Name, "BASH_FUNC_") && a.Value.Static && strings.HasPrefix(a.Value.Text, "()"):
			// BASH_FUNC_ls%%='() { …; }': bash imports the body as
			// the function ls.
			fn := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(a.Name, "BASH_FUNC_"), "%%"), "()")
			if validName(fn) {
				w.nested(a.Name+"=", Word{Text: fn + " " + a.Value.Text, Static: true}, cmd, c)
			}
		}
	}
}

// document walks the substitutions of text read as the body of a
// here-document: expansions and substitutions run, quotes are text.
func (w *walker) document(kind string, text Word, cmd *Command, c ctx) {
	if c.depth+1 > maxDepth {
		w.unknownCopy(cmd, fmt.Sprintf("nested deeper than %d scripts", maxDepth))
		return
	}
	if w.budget -= len(text.Text); w.budget < 0 {
		w.unknownCopy(cmd, fmt.Sprintf("nested scripts longer than %d times the line", nestedBudget))
		return
	}
	if err := checkBounds(text.Text); err != nil {
		w.unknownCopy(cmd, fmt.Sprintf("%s: %v", kind, err))
		return
	}
	p := parserPool.Get().(*syntax.Parser)
	word, err := p.Document(strings.NewReader(text.Text))
	parserPool.Put(p)
	if err != nil {
		w.unknownCopy(cmd, fmt.Sprintf("%s value does not parse: %v", kind, err))
		return
	}
	inner := c
	inner.depth++
	inner.redirs = nil
	inner.stdin = nil
	inner.nesting = append(append([]Frame(nil), cmd.Nesting...), Frame{Kind: kind, Pos: cmd.Pos})
	w.node(word, source{text: text.Text}, inner)
}

// unknownCopy reports a copy of cmd as unknown, leaving cmd as it is.
func (w *walker) unknownCopy(cmd *Command, why string) {
	u := *cmd
	u.Unknown = why
	w.emit(&u)
}

// noteFds records the files `exec N<FILE` opens for the rest of the line.
func (w *walker) noteFds(cmd *Command) {
	if len(cmd.Args) != 1 || !cmd.Args[0].Static || cmd.Args[0].Text != "exec" {
		return
	}
	for _, r := range cmd.Redirs {
		if n, op := redirFd(r.Op); n >= 0 && (op == "<" || op == "<>") {
			if w.fds == nil {
				w.fds = map[int]Word{}
			}
			w.fds[n] = r.Target
		}
	}
}

// fdProgram returns the file a program named by a descriptor
// (/dev/fd/3, /proc/self/fd/3) runs when the line opened that descriptor
// on a file: a redirection of the command itself (/dev/fd/3 … 3</bin/rm)
// or an earlier exec 3</bin/rm.
func (w *walker) fdProgram(cmd *Command) (Word, bool) {
	p := path.Clean(cmd.Args[0].Text)
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		// /proc/self/fd/N, /proc/thread-self/fd/N, /proc/$$/fd/N
		if _, after, ok := strings.Cut(rest, "/fd/"); ok {
			p = "/dev/fd/" + after
		}
	}
	n, ok := fdPath(p)
	if !ok {
		return Word{}, false
	}
	for i := len(cmd.Redirs) - 1; i >= 0; i-- {
		r := cmd.Redirs[i]
		if fd, op := redirFd(r.Op); fd == n && (op == "<" || op == "<>") {
			return r.Target, r.Target.Static
		}
	}
	t, ok := w.fds[n]
	return t, ok && t.Static
}

// fedSubst walks a process substitution >(…) that is fed static text:
// the first command in it reads that text on standard input (echo 'x' >
// >(bash) runs x).
func (w *walker) fedSubst(ps *syntax.ProcSubst, text Word, src source, c ctx) {
	inner := c.push(Frame{Kind: ">( )", Pos: pos(ps.Pos())})
	inner.redirs = nil
	inner.stdin = &piped{text: text}
	for _, st := range ps.Stmts {
		w.stmt(st, src, inner)
	}
}

// outSubst returns the process substitution >(…) a redirection of
// standard output writes into, or nil.
func outSubst(r *syntax.Redirect) *syntax.ProcSubst {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
	default:
		return nil
	}
	if r.N != nil && r.N.Value != "1" || r.Word == nil || len(r.Word.Parts) != 1 {
		return nil
	}
	ps, ok := r.Word.Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdOut {
		return nil
	}
	return ps
}

// RunsCommand reports whether a program of that name runs a command its
// own arguments give, as package shellparse reads it: a runner (env,
// sudo, timeout, xargs, …), a shell, eval, find, git, source, an
// interpreter. A command line made of such a program's words may run
// anything, so it is worth reading as one.
func RunsCommand(name string) bool {
	if _, ok := runners.lookup(name); ok {
		return true
	}
	if _, ok := subRunners[name]; ok {
		return true
	}
	switch name {
	case "parallel", "sem", "tmux", "at", "batch", "eval", "trap", "alias", "su", "runuser", "find",
		"git", "source", ".", "gdb":
		return true
	}
	return shells[name] || interpreter(name) != langNone || strings.HasPrefix(name, "git-")
}

// tableWrites adds to a command's redirections the files the program
// table says it writes: an option's file (sort -o F, find -fprint F, git
// log --output=F, curl -o F), the operands it writes (cp's destination,
// tee's files, rsync's destination), an archive it creates, the
// directory it extracts into. Such a write is a write as `> F` is: the
// redirection's Op is the option (or the program), its Kind is Write. An
// output option's file that stays in the working directory (go build -o
// bin/x) is where the program writes as a matter of course: not added.
func tableWrites(cmd *Command) {
	if len(cmd.Args) < 2 || !cmd.Args[0].Static || cmd.Unknown != "" {
		return
	}
	ts := commandTargets(cmd.Args)
	if len(cmd.Alias) > 0 {
		ts = append(ts, commandTargets(cmd.Alias)...) // python -m pytest --basetemp=D
	}
	cmd.TableWrites = true
	if len(ts) == 0 {
		return
	}
	redirs := cmd.Redirs[:len(cmd.Redirs):len(cmd.Redirs)]
	for _, t := range ts {
		if t.Output && t.Static && inTree(t.Path) {
			continue
		}
		op := t.How
		if op == "" {
			op = path.Base(cmd.Args[0].Text)
		}
		w := Word{Text: t.Path, Static: t.Static}
		if w.Static && hasGlob(w.Text) {
			w.Glob, w.Static = true, false // which file a pattern names is not known
		}
		dup := false
		for _, r := range redirs {
			dup = dup || r.Op == op && r.Target.Text == w.Text
		}
		if !dup {
			redirs = append(redirs, Redirect{Op: op, Target: w, Kind: writeKind(w)})
		}
	}
	cmd.Redirs = redirs
}

// commandTargets returns the files the program table says argv writes.
func commandTargets(argv []Word) []programs.Target {
	if len(argv) < 2 || !argv[0].Static {
		return nil
	}
	var buf [8]programs.Arg
	args := buf[:0]
	for _, a := range argv[1:] {
		args = append(args, programs.Arg{Text: a.Text, Static: a.Static && !a.Split})
	}
	ts, _ := programs.Builtin().Targets(argv[0].Text, args)
	return ts
}

// inTree reports whether a relative path stays inside the working
// directory: not absolute, not ~, no .. that leaves it.
func inTree(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "-") ||
		strings.Contains(p, `\`) || strings.Contains(p, ":") {
		return false
	}
	clean := path.Clean(p)
	return clean != ".." && !strings.HasPrefix(clean, "../")
}
