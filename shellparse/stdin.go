package shellparse

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// pipeText returns the text a statement writes to a pipe when it is known
// statically: echo or printf of static words, or cat of a here-document
// or here-string.
func pipeText(st *syntax.Stmt, src source) (Word, bool) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Assigns) > 0 {
		return Word{}, false
	}
	args := words(call.Args, src)
	for _, a := range args {
		if !a.Static || a.Split {
			return Word{}, false
		}
	}
	var redirs []*syntax.Redirect
	for _, r := range st.Redirs {
		n, _ := redirFd(r.Op.String())
		if r.N != nil {
			n, _ = strconv.Atoi(r.N.Value)
		}
		if n == 1 && r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc && r.Op != syntax.WordHdoc {
			return Word{}, false // stdout goes elsewhere
		}
		redirs = append(redirs, r)
	}
	switch path := args[0].Text; path {
	case "echo", "/bin/echo", "/usr/bin/echo":
		return echoText(args[1:])
	case "printf", "/usr/bin/printf":
		return printfText(args[1:])
	case "cat", "/bin/cat", "/usr/bin/cat":
		if len(args) > 1 && !(len(args) == 2 && args[1].Text == "-") {
			return Word{}, false
		}
		for i := len(redirs) - 1; i >= 0; i-- {
			r := redirect(redirs[i], src)
			if n, _ := redirFd(r.Op); n != 0 {
				continue
			}
			if r.Kind == Read && r.Target.Static && (redirs[i].Op == syntax.Hdoc || redirs[i].Op == syntax.DashHdoc || redirs[i].Op == syntax.WordHdoc) {
				t := r.Target
				if redirs[i].Op == syntax.WordHdoc {
					t.Text += "\n"
				}
				return t, true
			}
			return Word{}, false
		}
	}
	return Word{}, false
}

// echoText is what bash's echo writes for static arguments.
func echoText(args []Word) (Word, bool) {
	newline, escapes := true, false
	for len(args) > 0 {
		t := args[0].Text
		if len(t) < 2 || t[0] != '-' || strings.Trim(t[1:], "neE") != "" {
			break
		}
		for _, f := range t[1:] {
			switch f {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Text
	}
	text := strings.Join(parts, " ")
	if escapes && strings.Contains(text, `\`) {
		if strings.Contains(text, `\c`) {
			return Word{}, false
		}
		text = ansiC(text)
	}
	if newline {
		text += "\n"
	}
	return Word{Text: text, Static: true}, true
}

// printfText is what printf writes for a format with no conversions, or
// for %s / %s\n / %b\n over static arguments.
func printfText(args []Word) (Word, bool) {
	if len(args) > 0 && args[0].Text == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0].Text, "-") {
		return Word{}, false
	}
	format, rest := args[0].Text, args[1:]
	switch format {
	case "%s", "%s\\n", "%b", "%b\\n":
		var sb strings.Builder
		for _, a := range rest {
			v := a.Text
			if strings.HasPrefix(format, "%b") {
				if strings.Contains(v, `\c`) {
					return Word{}, false
				}
				v = ansiC(v)
			}
			sb.WriteString(v)
			if strings.HasSuffix(format, "\\n") {
				sb.WriteByte('\n')
			}
		}
		return Word{Text: sb.String(), Static: true}, true
	}
	if len(rest) > 0 || strings.Contains(strings.ReplaceAll(format, "%%", ""), "%") || strings.Contains(format, `\c`) {
		return Word{}, false
	}
	return Word{Text: ansiC(strings.ReplaceAll(format, "%%", "%")), Static: true}, true
}

// positional substitutes known positional parameters into a word: "$1",
// $@, "${2}", "$*", $#. It reports false when the word uses anything else
// that is not static, or a parameter that is not known.
func positional(word *syntax.Word, p *params) ([]Word, bool) {
	if p == nil || !p.valid {
		return nil, false
	}
	var sb strings.Builder
	split, glob, used := false, false, false
	var multi []Word // "$@" alone
	lookup := func(pe *syntax.ParamExp) ([]Word, bool) {
		if pe.Param == nil || pe.Excl || pe.Length || pe.Index != nil || pe.Slice != nil ||
			pe.Repl != nil || pe.Exp != nil || pe.Names != 0 || pe.Flags != nil || pe.NestedParam != nil {
			return nil, false
		}
		name := pe.Param.Value
		switch {
		case name == "@" || name == "*":
			for _, w := range p.words[1:] {
				if !w.Static {
					return nil, false
				}
			}
			return p.words[1:], true
		case name == "#":
			return []Word{{Text: strconv.Itoa(len(p.words) - 1), Static: true}}, true
		case isNumber(name):
			n, err := strconv.Atoi(name)
			if err != nil {
				return nil, false
			}
			if n >= len(p.words) {
				return []Word{{Text: "", Static: true}}, true
			}
			if !p.words[n].Static {
				return nil, false
			}
			return p.words[n : n+1], true
		}
		return nil, false
	}
	join := func(ws []Word) string {
		parts := make([]string, len(ws))
		for i, w := range ws {
			parts[i] = w.Text
		}
		return strings.Join(parts, " ")
	}
	for _, part := range word.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if hasGlob(x.Value) {
				glob = true
			}
			sb.WriteString(unescape(x.Value, ""))
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.ParamExp:
			ws, ok := lookup(x)
			if !ok {
				return nil, false
			}
			used = true
			split = true
			v := join(ws)
			if hasGlob(v) {
				glob = true
			}
			sb.WriteString(v)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				switch y := q.(type) {
				case *syntax.Lit:
					sb.WriteString(unescape(y.Value, "$`\"\\\n"))
				case *syntax.ParamExp:
					ws, ok := lookup(y)
					if !ok {
						return nil, false
					}
					used = true
					if y.Param.Value == "@" && len(word.Parts) == 1 && len(x.Parts) == 1 {
						multi = ws
						if multi == nil {
							multi = []Word{}
						}
					}
					sb.WriteString(join(ws))
				default:
					return nil, false
				}
			}
		default:
			return nil, false
		}
	}
	if !used {
		return nil, false
	}
	if multi != nil {
		return multi, true
	}
	text := sb.String()
	if split && len(word.Parts) > 1 && strings.ContainsAny(text, " \t\n") {
		return nil, false // which blanks split is not worth modelling
	}
	if split {
		// An unquoted expansion is split on blanks.
		out := []Word{}
		for _, f := range strings.Fields(text) {
			out = append(out, Word{Text: f, Static: true, Glob: glob && hasGlob(f)})
		}
		return out, true
	}
	return []Word{{Text: text, Static: true}}, true
}
