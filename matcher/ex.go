package matcher

import (
	"fmt"
	"strings"
)

// Ex commands (vi and vim's -c, --cmd and +CMD, ex's own input) are read
// for what they run: a shell escape (!CMD, :r !CMD, :w !CMD, a range
// filtered through !CMD) is a command line, decided as what it is; a
// command that may run anything else (call, lua, python, source, normal,
// execute, terminal, an expression with \=) makes the command at least
// ask; setting options, moving, searching, writing and quitting run
// nothing.

// exHarmless are Ex commands that run nothing, by their full names and
// the abbreviations vim accepts.
var exHarmless = map[string]bool{
	"set": true, "se": true, "setlocal": true, "setl": true, "setglobal": true, "setg": true,
	"syntax": true, "syn": true, "filetype": true, "filet": true, "colorscheme": true, "colo": true,
	"quit": true, "q": true, "qu": true, "qall": true, "qa": true, "quitall": true, "quita": true,
	"wq": true, "wqall": true, "wqa": true, "xit": true, "x": true, "xall": true, "xa": true,
	"exit": true, "exi": true, "write": true, "w": true, "wall": true, "wa": true, "update": true,
	"up": true, "edit": true, "e": true, "enew": true, "ene": true, "nohlsearch": true, "noh": true,
	"only": true, "on": true, "redraw": true, "redr": true, "substitute": true, "s": true,
	"delete": true, "d": true, "yank": true, "y": true, "sort": true, "sor": true, "retab": true,
	"ret": true, "join": true, "j": true, "undo": true, "u": true, "redo": true, "red": true,
	"split": true, "sp": true, "vsplit": true, "vs": true, "tabnew": true, "next": true, "n": true,
	"previous": true, "prev": true, "buffer": true, "b": true, "help": true, "h": true, "": true,
}

// exReadWrite are the commands whose !CMD argument is a shell command:
// :r !CMD reads its output, :w !CMD writes the buffer to it.
var exReadWrite = map[string]bool{"read": true, "r": true, "write": true, "w": true}

// exLine reads Ex commands: the shell command lines they run, and the
// first command that may run anything else ("" if none).
func exLine(s string) (shell []string, code string) {
	for s != "" {
		s = strings.TrimLeft(s, " \t:|\n")
		s = skipRange(s)
		if rest, ok := strings.CutPrefix(s, "!"); ok {
			// !CMD, or RANGE!CMD: the rest of the line is the command.
			return append(shell, rest), code
		}
		n := 0
		for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z') {
			n++
		}
		name, rest := s[:n], s[n:]
		if n == 0 && rest != "" && rest[0] == '"' {
			break // a comment to the end of the line
		}
		if n == 0 && rest != "" && !strings.ContainsRune("|\n", rune(rest[0])) {
			// Not a command name: &&, @a, a register, …
			if code == "" {
				code = strings.TrimSpace(rest)
			}
		}
		rest = strings.TrimPrefix(rest, "!") // q!, w!: the bang forces
		arg := strings.TrimLeft(rest, " \t")
		switch {
		case name == "silent" || name == "sil":
			s = arg
			continue
		case exReadWrite[name] && strings.HasPrefix(arg, "!"):
			return append(shell, arg[1:]), code
		case exHarmless[name] && !strings.Contains(arg, `\=`):
		case code == "":
			code = name
		}
		// The next command after an unescaped |.
		i := strings.IndexAny(rest, "|\n")
		if i < 0 {
			break
		}
		s = rest[i+1:]
	}
	return shell, code
}

// skipRange drops an Ex line range: numbers, ., $, %, marks, offsets and
// /pattern/ or ?pattern? searches, with , and ; between.
func skipRange(s string) string {
	for s != "" {
		switch c := s[0]; {
		case c >= '0' && c <= '9' || strings.IndexByte(".$%,;+- \t", c) >= 0:
			s = s[1:]
		case c == '\'' && len(s) > 1:
			s = s[2:]
		case c == '/' || c == '?':
			end := strings.IndexByte(s[1:], c)
			if end < 0 {
				return ""
			}
			s = s[end+2:]
		default:
			return s
		}
	}
	return s
}

// exEffects applies an ex fact: the shell commands of Ex text are decided
// as command lines; one that may run anything else is a floor.
func (c *call) exEffects(text, via, fact string, flags []string) {
	shell, code := exLine(text)
	for _, sh := range shell {
		c.nested = append(c.nested, nested{script: sh, via: via, fact: fact, decide: true, flags: flags})
	}
	if code != "" {
		c.floors = append(c.floors, limit{why: fmt.Sprintf("%s %s runs the Ex command %s, which can run commands", c.prog, via, code), fact: fact, flags: flags})
	}
}
