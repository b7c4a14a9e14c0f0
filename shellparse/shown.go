package shellparse

import (
	"path"
	"strconv"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"mvdan.cc/sh/v3/syntax"
)

// A file the line writes out with text it shows (cat <<'EOF' > x.sh, echo
// … > f, printf … > f) and then runs (sh x.sh, ./x.sh after chmod +x,
// source x.sh, python3 x.py) runs that text, unless something else wrote
// the file in between: its commands are followed as a nested script, or
// the code as an interpreter's inline code is (Command.Shown). Whether the
// write happened (a branch not taken, a file that refused it) is not
// known: the matcher never allows such a run, it only sees into it.

// writtenText returns the text a statement writes to a file, and the
// file, when both are known statically: one `>` (or `>|`) of its standard
// output to a static path, and echo, printf or cat of a here-document as
// the command.
func writtenText(st *syntax.Stmt, src source) (text Word, file string, ok bool) {
	var out *syntax.Redirect
	rest := *st
	rest.Redirs = nil
	for _, r := range st.Redirs {
		n, op := redirFd(r.Op.String())
		if r.N != nil {
			n, _ = strconv.Atoi(r.N.Value)
		}
		if n == 1 && (op == ">" || op == ">|") && out == nil {
			out = r
			continue
		}
		rest.Redirs = append(rest.Redirs, r)
	}
	if out == nil {
		return Word{}, "", false
	}
	target := redirect(out, src).Target
	if !target.Static || target.Text == "" || target.Text == "/dev/null" {
		return Word{}, "", false
	}
	text, ok = pipeText(&rest, src)
	return text, target.Text, ok
}

// shownPath is a path as the shown map keys it: joined to the working
// directory the line set, cleaned.
func (w *walker) shownPath(p string) string {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && w.cwd != "" {
		p = path.Join(w.cwd, p)
	}
	return path.Clean(p)
}

// forgetWritten drops the shown text of every file cmd writes: another
// write makes it unknown; one to a path not known statically, or that the
// table cannot name, may be any of them.
func (w *walker) forgetWritten(cmd *Command) {
	if len(w.shown) == 0 {
		return
	}
	for _, r := range cmd.Redirs {
		if r.Kind != Write {
			continue
		}
		if !r.Target.Static {
			clear(w.shown)
			return
		}
		delete(w.shown, w.shownPath(r.Target.Text))
	}
	if len(cmd.Args) < 2 || !cmd.Args[0].Static || metadataOnly[path.Base(cmd.Args[0].Text)] {
		return
	}
	args := make([]programs.Arg, len(cmd.Args)-1)
	for i, a := range cmd.Args[1:] {
		args[i] = programs.Arg{Text: a.Text, Static: a.Static && !a.Split}
	}
	ts, unknown := programs.Builtin().Targets(cmd.Args[0].Text, args)
	if unknown || !cmd.Static() {
		clear(w.shown)
		return
	}
	for _, t := range ts {
		delete(w.shown, w.shownPath(t.Path))
	}
}

// metadataOnly are the programs whose targets keep their content: they
// change a file's mode, owner or times (chmod +x x.sh before running it).
var metadataOnly = map[string]bool{"chmod": true, "chown": true, "chgrp": true, "touch": true}

// shownText returns the text the line showed for the file p, if any.
func (w *walker) shownText(p string) (Word, string, bool) {
	if len(w.shown) == 0 {
		return Word{}, "", false
	}
	key := w.shownPath(p)
	t, ok := w.shown[key]
	return t, key, ok
}

// runShown follows what cmd runs when it runs a file the line showed:
// a shell script (no #!, or one naming sh, bash, dash or zsh) as a nested
// script, an interpreter's script as its code. It reports whether it did.
func (w *walker) runShown(shell string, file string, cmd *Command, c ctx) bool {
	text, key, ok := w.shownText(file)
	if !ok {
		return false
	}
	lang := langNone
	if shell == "" {
		shell, lang = shebang(text.Text)
		if shell == "" && lang == langNone {
			return false
		}
	}
	cmd.Shown = key
	if lang != langNone {
		w.codeCommands(lang, path.Base(file)+" code", text.Text, cmd, c)
		if why := codeNetwork(lang, text.Text); why != "" && cmd.Network == "" {
			cmd.Network = file + " " + why
		}
		return true
	}
	w.nested(shell+" "+file, text, cmd, c)
	return true
}

// shebang returns the shell, or the interpreter family, a script's #!
// line names; a script without one runs in sh.
func shebang(text string) (shell string, l lang) {
	if !strings.HasPrefix(text, "#!") {
		return "sh", langNone
	}
	line, _, _ := strings.Cut(text[2:], "\n")
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", langNone
	}
	prog := path.Base(f[0])
	if prog == "env" && len(f) > 1 && !strings.HasPrefix(f[1], "-") {
		prog = f[1]
	}
	switch {
	case shells[prog]:
		return prog, langNone
	case interpreter(prog) != langNone:
		return "", interpreter(prog)
	}
	return "", langNone
}
