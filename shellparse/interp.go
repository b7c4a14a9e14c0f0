package shellparse

import (
	"fmt"
	"slices"
	"strings"
)

// Interpreters run code given inline (python -c, node -e, perl -e, …) or
// on standard input (a here-document, a here-string, a static echo piped
// in). The command itself is reported as it is: the matcher decides
// interpreters. What this file adds is the shell commands visible in the
// code: the string literal passed to an obvious command-running call
// (os.system, subprocess.*, execSync, system, exec, backticks, qx, popen)
// is followed as a nested script, a list literal as an argv. A call whose
// argument is not a plain literal (a variable, concatenation,
// interpolation) yields a Command with Unknown set. Code is read with a
// small scanner, not a parser: it finds calls where they are spelled
// plainly and fails closed when an argument is anything else.

// lang is an interpreter family.
type lang int

const (
	langNone lang = iota
	langPython
	langNode
	langPerl
	langRuby
	langPHP
	langLua
	langR
)

// interpreter returns the family of a program name: python3.12 is python.
func interpreter(name string) lang {
	switch name {
	case "node", "nodejs":
		return langNode
	case "luajit":
		return langLua
	case "Rscript", "R":
		return langR
	}
	base := strings.TrimRight(name, "0123456789.")
	switch base {
	case "python", "pypy":
		return langPython
	case "perl":
		return langPerl
	case "php":
		return langPHP
	case "lua":
		return langLua
	case "ruby":
		return langRuby
	}
	return langNone
}

// inlineSpec says where each family takes inline code: code options (with
// the value in the next word or attached), options taking a value, and
// whether the first operand ends the options.
type inlineSpec struct {
	code   string   // short options whose value is code (-c, -e)
	valued string   // short options taking a value
	long   optNames // long options whose value is code
	longV  optNames // long options taking a value that is not code
	multi  bool     // several code options add up (perl -e -e)
}

var inlineSpecs = map[lang]*inlineSpec{
	langPython: {code: "c", valued: "WXm"},
	langNode: {code: "ep", valued: "rC", long: optNames{"--eval", "--print"},
		longV: optNames{"--require", "--import", "--loader", "--experimental-loader", "--conditions",
			"--input-type", "--title", "--env-file", "--inspect-port", "--stack-size"}},
	langPerl: {code: "eE", valued: "IMmx", multi: true},
	langRuby: {code: "e", valued: "rICEFx", multi: true},
	langPHP:  {code: "rBRE", valued: "dcfFz", multi: true},
	langLua:  {code: "e", valued: "l", multi: true},
	langR:    {code: "e", valued: "", multi: true},
}

// interp follows the shell commands inside an interpreter's code.
func (w *walker) interp(l lang, cmd *Command, c ctx) {
	spec := inlineSpecs[l]
	var code, modules []Word
	args := cmd.Args[1:]
	script := false // a script file or module runs: no inline code
	var file *Word  // the script file
	for i := 0; i < len(args) && !script; i++ {
		a := args[i]
		t := a.Text
		if !a.Static {
			// An option we cannot read may be -c: the code is unknown.
			if strings.HasPrefix(t, "-") || a.Split {
				w.interpUnknown(cmd, fmt.Sprintf("%s's option %s is not static", cmd.Name(), t), false, c)
			}
			return
		}
		switch {
		case t == "--" || t == "-":
			script = t == "--"
			if t == "-" {
				i = len(args)
			}
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t, "=")
			switch {
			case spec.long.has(name):
				if hasVal {
					code = append(code, Word{Text: val, Static: true})
				} else if i+1 < len(args) {
					i++
					code = append(code, args[i])
				}
			case spec.longV.has(name) && !hasVal:
				i++
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			for j := 1; j < len(t); j++ {
				ch := t[j]
				if strings.IndexByte(spec.code, ch) >= 0 {
					if j+1 < len(t) {
						code = append(code, Word{Text: t[j+1:], Static: true})
					} else if i+1 < len(args) {
						i++
						code = append(code, args[i])
					}
					break
				}
				if l == langPerl && (ch == 'M' || ch == 'm') && j+1 < len(t) {
					// perl -MMODULE is `use MODULE;` put before the
					// code: -M'strict;system(…)' is code too.
					modules = append(modules, Word{Text: t[j+1:], Static: true})
					break
				}
				if strings.IndexByte(spec.valued, ch) >= 0 {
					if j+1 == len(t) {
						i++
					}
					if ch == 'm' && l == langPython {
						script = true // python -m module
					}
					break
				}
			}
			if len(code) > 0 && !spec.multi {
				script = true // python -c ends python's options
			}
		default:
			script, file = true, &args[i] // the script file
		}
	}
	if l == langPerl {
		// PERL5OPT holds switches perl reads as its own: -M code.
		for _, a := range cmd.Assigns {
			if a.Name != "PERL5OPT" || !a.Value.Static {
				continue
			}
			for _, f := range strings.Fields(a.Value.Text) {
				if m, ok := strings.CutPrefix(strings.TrimPrefix(f, "-"), "M"); ok && strings.HasPrefix(f, "-") && m != "" {
					modules = append(modules, Word{Text: m, Static: true})
				} else if m, ok := strings.CutPrefix(strings.TrimPrefix(f, "-"), "m"); ok && strings.HasPrefix(f, "-") && m != "" {
					modules = append(modules, Word{Text: m, Static: true})
				}
			}
		}
	}
	if file != nil {
		// A script the line wrote out: its code is shown.
		if text, key, ok := w.shownText(file.Text); ok {
			cmd.Shown = key
			code = append(code, text)
		}
	}
	kind := cmd.Name() + " code"
	if len(code) == 0 && !script {
		// The code comes on standard input.
		if t := w.stdinText(cmd, c); t != nil {
			code = append(code, *t)
		}
	}
	for _, cw := range append(code, modules...) {
		if !cw.Static {
			continue // the matcher already refuses to allow code it cannot read
		}
		if why := codeNetwork(l, cw.Text); why != "" && cmd.Network == "" {
			cmd.Network = kind + " " + why
		}
		w.codeCommands(l, kind, cw.Text, cmd, c)
	}
}

// stdinText returns the static text on a command's standard input: a
// here-document or here-string, or what a static echo pipes in.
func (w *walker) stdinText(cmd *Command, c ctx) *Word {
	for i := len(cmd.Redirs) - 1; i >= 0; i-- {
		r := cmd.Redirs[i]
		n, op := redirFd(r.Op)
		if n != 0 {
			continue
		}
		if (op == "<<" || op == "<<-" || op == "<<<") && r.Target.Static {
			t := r.Target
			return &t
		}
		return nil
	}
	if c.stdin != nil && !c.stdin.used {
		t := c.stdin.text
		return &t
	}
	return nil
}

// interpUnknown reports what an interpreter's code runs that cannot be
// read; opaque when the code computes it (see Command.Opaque), not when
// the line hides the code itself.
func (w *walker) interpUnknown(cmd *Command, why string, opaque bool, c ctx) {
	nest := make([]Frame, len(cmd.Nesting), len(cmd.Nesting)+1)
	copy(nest, cmd.Nesting)
	u := &Command{Redirs: cmd.Redirs, Pos: cmd.Pos, Source: cmd.Source, Dir: cmd.Dir, Unknown: why, Opaque: opaque,
		Nesting: append(nest, Frame{Kind: cmd.Name() + " code", Pos: cmd.Pos})}
	w.emit(u)
}

// runCalls are the names of calls that run a command line or an argv, per
// family. A name matches after a non-identifier byte or a dot.
var runCalls = map[lang][]string{
	langPython: {"system", "popen", "Popen", "run", "call", "check_call", "check_output",
		"getoutput", "getstatusoutput", "spawn", "execl", "execlp", "execle", "execv", "execvp",
		"execvpe", "execve", "spawnl", "spawnlp", "spawnv", "spawnvp", "posix_spawn", "posix_spawnp",
		"create_subprocess_shell", "create_subprocess_exec"},
	langNode: {"exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork", "execa",
		"execaSync", "execaCommand", "execaCommandSync"},
	langPerl: {"system", "exec", "readpipe"},
	langRuby: {"system", "exec", "spawn", "popen", "capture2", "capture2e", "capture3", "popen2",
		"popen2e", "popen3", "pipeline", "pipeline_r", "pipeline_w", "pipeline_rw"},
	langPHP: {"system", "exec", "shell_exec", "passthru", "popen", "proc_open", "pcntl_exec"},
	langLua: {"execute", "popen"},
	langR:   {"system", "system2", "shell", "pipe"},
}

// removeCalls are the calls that delete the file or tree their first
// argument names (shutil.rmtree, fs.rmSync, FileUtils.rm_rf, unlink): a
// literal path is followed as rm -rf PATH, so that the rules about rm
// decide (and the never-allow list holds for / and ~).
var removeCalls = map[lang][]string{
	langPython: {"rmtree", "remove", "unlink", "rmdir", "removedirs"},
	langNode:   {"rmSync", "rmdirSync", "unlinkSync", "rm", "rmdir", "unlink", "rimraf", "remove", "removeSync"},
	langPerl:   {"rmtree", "remove_tree", "unlink"},
	langRuby:   {"rm_rf", "rm_r", "rm", "remove_dir", "remove_entry", "remove_entry_secure", "rmtree", "delete", "unlink"},
	langPHP:    {"unlink", "rmdir"},
	langLua:    {"remove"},
	langR:      {"unlink", "remove"},
}

// ambiguous are call names that are common for other things: they count
// only when the code mentions a module that runs commands.
var ambiguous = map[lang]map[string]string{
	langPython: {"run": "subprocess", "call": "subprocess", "spawn": "spawn", "popen": "popen"},
	langNode:   {"exec": "child_process", "spawn": "child_process", "fork": "child_process"},
	langRuby:   {"pipeline": "Open3", "popen": "popen", "spawn": "spawn"},
	langR:      {"pipe": "pipe(", "shell": "shell("},
}

// codeCommands finds the command-running calls in code and follows their
// literal arguments.
func (w *walker) codeCommands(l lang, kind, code string, cmd *Command, c ctx) {
	follow := func(script Word) {
		w.nested(kind, script, cmd, c)
	}
	argv := func(words []Word) {
		w.inner(kind, cmd, words, nil, c)
	}
	unknown := func(what string) {
		w.interpUnknown(cmd, fmt.Sprintf("%s runs a command that is not a literal: %s", kind, what), true, c)
	}
	found := 0
	for i := 0; i < len(code); i++ {
		ch := code[i]
		// Backticks run a command line in perl, ruby and php.
		if ch == '`' && (l == langPerl || l == langRuby || l == langPHP) {
			end := strings.IndexByte(code[i+1:], '`')
			if end < 0 {
				unknown("an unclosed backtick")
				return
			}
			body := code[i+1 : i+1+end]
			if interpolates(l, '"', body) {
				unknown("`" + body + "`")
			} else {
				follow(Word{Text: body, Static: true})
			}
			found++
			i += end + 1
			continue
		}
		if !identStart(ch) || (i > 0 && identByte(code[i-1])) {
			continue
		}
		j := i
		for j < len(code) && identByte(code[j]) {
			j++
		}
		name := code[i:j]
		// qx{…} and %x(…)
		if (l == langPerl && name == "qx") || (l == langRuby && name == "x" && i > 0 && code[i-1] == '%') {
			if j < len(code) {
				body, end, ok := delimited(code, j)
				if !ok {
					unknown(name + " with no end")
					return
				}
				if code[j] != '\'' && interpolates(l, '"', body) {
					unknown(name + code[j:end])
				} else {
					follow(Word{Text: body, Static: true})
				}
				found++
				i = end - 1
				continue
			}
		}
		if slices.Contains(removeCalls[l], name) {
			k := skipBlank(code, j)
			if k < len(code) && (code[k] == '(' || l == langPerl || l == langRuby) {
				if code[k] == '(' {
					k++
				}
				if words, end, ok := literalArgs(l, code, k); ok && len(words) > 0 {
					argv([]Word{{Text: "rm", Static: true}, {Text: "-rf", Static: true}, {Text: words[0].text, Static: true}})
					found++
					i = max(end, j) - 1
					continue
				}
			}
		}
		if !isRunCall(l, name, code) {
			i = j - 1
			continue
		}
		k := j
		for k < len(code) && (code[k] == ' ' || code[k] == '\t') {
			k++
		}
		paren := k < len(code) && code[k] == '('
		if !paren && l != langPerl && l != langRuby {
			i = j - 1
			continue // perl and ruby call without parentheses too
		}
		if paren {
			k++
		}
		if q := skipBlank(code, k); l == langPerl && (strings.HasPrefix(code[q:], "q") || strings.HasPrefix(code[q:], "qq")) && !strings.HasPrefix(code[q:], "qw") {
			// system q(rm -rf /), system qq{…}: a quoted string.
			n := 1
			if strings.HasPrefix(code[q:], "qq") {
				n = 2
			}
			if q+n < len(code) && !identByte(code[q+n]) && code[q+n] != ' ' {
				body, end, ok := delimited(code, q+n)
				if !ok {
					unknown("q with no end")
					return
				}
				found++
				if n == 2 && interpolates(l, '"', body) {
					unknown(code[q:end])
				} else {
					follow(Word{Text: body, Static: true})
				}
				i = end - 1
				continue
			}
		}
		if q := skipBlank(code, k); l == langPerl && strings.HasPrefix(code[q:], "qw") && q+2 < len(code) && !identByte(code[q+2]) && code[q+2] != ' ' {
			// system qw(rm -rf /): a list of words, never interpolated.
			body, end, ok := delimited(code, q+2)
			if !ok {
				unknown("qw with no end")
				return
			}
			found++
			var ws []Word
			for _, f := range strings.Fields(body) {
				ws = append(ws, Word{Text: f, Static: true})
			}
			if len(ws) > 0 {
				argv(ws)
			}
			i = end - 1
			continue
		}
		if !paren && (k == j || k >= len(code) || (code[k] != '\'' && code[k] != '"' && code[k] != '[')) {
			i = j - 1
			continue // `system` as a word, not a call
		}
		found++
		words, end, ok := literalArgs(l, code, k)
		switch {
		case !ok:
			unknown(strings.TrimSpace(code[i:min(len(code), k+40)]))
		case len(words) == 1 && !words[0].list:
			follow(Word{Text: words[0].text, Static: true})
		default:
			var ws []Word
			for _, lw := range words {
				ws = append(ws, Word{Text: lw.text, Static: true})
			}
			if len(ws) > 0 {
				argv(ws)
			}
		}
		i = max(end, j) - 1
	}
	_ = found
}

// isRunCall reports whether name, in this code, is a call that runs a
// command.
func isRunCall(l lang, name, code string) bool {
	ok := false
	for _, n := range runCalls[l] {
		if n == name {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	if need, amb := ambiguous[l][name]; amb {
		return strings.Contains(code, need) && (need != "popen" || strings.Contains(code, "os.popen") || strings.Contains(code, "IO.popen") || strings.Contains(code, "popen("))
	}
	return true
}

func identStart(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func identByte(b byte) bool {
	return identStart(b) || b >= '0' && b <= '9'
}

type litWord struct {
	text string
	list bool // part of a list literal: an argv
}

// literalArgs reads a call's arguments from code[i:] up to the closing
// parenthesis or the end of the statement: the leading string literals,
// or one list literal of strings. Keyword arguments after them
// (shell=True) are allowed. ok is false when the first argument is not a
// literal, or a literal is followed by anything but a separator.
func literalArgs(l lang, code string, i int) ([]litWord, int, bool) {
	var out []litWord
	i = skipBlank(code, i)
	if i < len(code) && (code[i] == '[' || (l == langR && strings.HasPrefix(code[i:], "c("))) {
		if code[i] == 'c' {
			i++
		}
		i++
		for {
			i = skipBlank(code, i)
			if i < len(code) && (code[i] == ']' || code[i] == ')') {
				i++
				break
			}
			s, end, ok := stringLit(l, code, i)
			if !ok {
				return nil, i, false
			}
			out = append(out, litWord{text: s, list: true})
			i = skipBlank(code, end)
			if i < len(code) && code[i] == ',' {
				i++
			}
		}
		return out, i, len(out) > 0
	}
	for {
		s, end, ok := stringLit(l, code, i)
		if !ok {
			if len(out) == 0 {
				return nil, i, false
			}
			return out, i, true // keyword arguments and the rest
		}
		out = append(out, litWord{text: s})
		i = skipBlank(code, end)
		switch {
		case i >= len(code) || code[i] == ')' || code[i] == ';' || code[i] == '\n':
			if len(out) > 1 {
				for n := range out {
					out[n].list = true
				}
			}
			return out, i, true
		case code[i] == ',':
			i = skipBlank(code, i+1)
			if i < len(code) && code[i] == '[' && l != langPerl {
				// execFile('rm', ['-rf', '/']), system2('rm', c(…))
				more, end, ok := literalArgs(l, code, i)
				if !ok {
					return nil, end, false
				}
				out = append(out, more...)
				for n := range out {
					out[n].list = true
				}
				return out, end, true
			}
			if l == langR && strings.HasPrefix(code[i:], "c(") {
				more, end, ok := literalArgs(l, code, i)
				if !ok {
					return nil, end, false
				}
				out = append(out, more...)
				for n := range out {
					out[n].list = true
				}
				return out, end, true
			}
			if i < len(code) && code[i] != '\'' && code[i] != '"' {
				// shell=True, an options object: the rest is not
				// the command.
				if len(out) > 1 {
					for n := range out {
						out[n].list = true
					}
				}
				return out, i, true
			}
		default:
			return nil, i, false // concatenation, a method call, …
		}
	}
}

func skipBlank(code string, i int) int {
	for i < len(code) && (code[i] == ' ' || code[i] == '\t' || code[i] == '\n' || code[i] == '\r') {
		i++
	}
	return i
}

// stringLit reads a plain string literal at code[i:]: its value, and the
// index after it. ok is false for anything that is not one, or one that
// interpolates.
func stringLit(l lang, code string, i int) (string, int, bool) {
	raw, fstr := false, false
	if l == langPython {
		for k := 0; k < 2 && i < len(code); k++ {
			switch code[i] {
			case 'r', 'R':
				raw = true
				i++
				continue
			case 'b', 'B', 'u', 'U':
				i++
				continue
			case 'f', 'F':
				fstr = true
				i++
				continue
			}
			break
		}
	}
	if i >= len(code) {
		return "", i, false
	}
	q := code[i]
	if q != '\'' && q != '"' && !(q == '`' && l == langNode) {
		return "", i, false
	}
	triple := l == langPython && strings.HasPrefix(code[i:], strings.Repeat(string(q), 3))
	start := i + 1
	if triple {
		start = i + 3
	}
	var sb strings.Builder
	for j := start; j < len(code); j++ {
		ch := code[j]
		if ch == '\\' && j+1 < len(code) && !(raw && code[j+1] != q) {
			if raw || l == langPerl && q == '\'' || l == langPHP && q == '\'' || l == langRuby && q == '\'' {
				if code[j+1] == q || code[j+1] == '\\' {
					sb.WriteByte(code[j+1])
				} else {
					sb.WriteByte('\\')
					sb.WriteByte(code[j+1])
				}
				j++
				continue
			}
			j++
			switch code[j] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			case '\n':
			default:
				sb.WriteByte(code[j])
			}
			continue
		}
		if ch == q && (!triple || strings.HasPrefix(code[j:], strings.Repeat(string(q), 3))) {
			end := j + 1
			if triple {
				end = j + 3
			}
			s := sb.String()
			if fstr && strings.ContainsAny(code[start:j], "{") {
				return "", end, false
			}
			if interpolates(l, q, code[start:j]) {
				return "", end, false
			}
			return s, end, true
		}
		sb.WriteByte(ch)
	}
	return "", len(code), false
}

// interpolates reports whether a quoted body expands variables or code.
func interpolates(l lang, q byte, body string) bool {
	switch {
	case l == langNode && q == '`':
		return strings.Contains(body, "${")
	case q == '\'':
		return false
	case l == langPerl:
		return strings.ContainsAny(body, "$@")
	case l == langPHP:
		return strings.Contains(body, "$")
	case l == langRuby:
		return strings.Contains(body, "#{")
	}
	return false
}

// delimited reads a quote-like operator's body (qx{…}, qx(…), qx/…/).
func delimited(code string, i int) (string, int, bool) {
	open := code[i]
	close := open
	switch open {
	case '{':
		close = '}'
	case '(':
		close = ')'
	case '[':
		close = ']'
	case '<':
		close = '>'
	}
	if identByte(open) || open == ' ' {
		return "", i, false
	}
	end := strings.IndexByte(code[i+1:], close)
	if end < 0 {
		return "", len(code), false
	}
	return code[i+1 : i+1+end], i + 2 + end, true
}

// RunsFile reports whether a program runs a file named by its first
// operand as code: a shell (sh x.sh, source x.sh) or an interpreter
// (python3 x.py). A file written earlier on the same line and then run
// this way runs what the line wrote.
func RunsFile(name string) bool {
	return shells[name] || name == "source" || name == "." || interpreter(name) != langNone
}
