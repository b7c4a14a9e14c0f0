package shellparse

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// optSpec describes a runner's command-line options, so that the first word
// of the command it runs can be found. An option the spec does not know makes
// the split unknowable: the runner is then reported with Unknown set rather
// than guessed at.
type optSpec struct {
	flags     string   // short options without a value
	valued    string   // short options taking a value, attached or next word
	optional  string   // short options whose value can only be attached (xargs -i[R])
	query     string   // short options meaning no command runs (command -v)
	long      longOpts // long options, name= for one taking a value (attached with = or next word)
	optLong   longOpts // long options whose value can only be attached with =
	numeric   bool     // -N is an option (nice -10)
	operands  int      // words between the options and the command (timeout DURATION)
	assigns   bool     // NAME=VALUE words before the command (env, sudo)
	plusFlags bool     // +x options (shells)
	dashAlone bool     // a lone - is an option (env -)
	goFlags   bool     // Go's flag package: -name, --name, -name=value (jiri)
	anyLong   bool     // every --name[=value] is an option without a separate value (firejail)

	// What the runner does, beyond finding the command.
	keep       bool     // report the runner itself too: its own rules apply (ssh, chroot)
	join       bool     // the command words are joined and run by sh -c (watch, ssh)
	each       bool     // every operand is a command line run by a shell (hyperfine)
	scriptOpts optNames // options whose value is a command line (flock -c, script -c)
	progOpts   optNames // options whose value is a program it runs: the command is unknown
	writeOpts  optNames // options whose value is a file it writes (strace -o)
	chdirOpts  optNames // options setting the directory the command runs in (env -C)
	noCmd      string   // without a command it runs this instead (an interactive shell)
}

type opt struct {
	name  string // "-u", "--unset"
	value *Word
}

type split struct {
	opts    []opt
	assigns []Assign
	rest    []Word // the command and its arguments
	query   bool   // an option says no command runs
}

// scan splits args by spec. ok is false when the options cannot be read
// statically or an option is unknown.
func (s *optSpec) scan(args []Word) (out split, why string) {
	i := 0
	for i < len(args) {
		a := args[i]
		if !a.Static {
			if strings.HasPrefix(a.Text, "-") || a.Split {
				return out, fmt.Sprintf("option %s is not static", a.Text)
			}
			break
		}
		t := a.Text
		if t == "--" {
			i++
			break
		}
		if t == "-" && s.dashAlone {
			out.opts = append(out.opts, opt{name: "-"})
			i++
			continue
		}
		if s.goFlags && len(t) > 1 && t[0] == '-' {
			name, val, hasVal := strings.Cut(strings.TrimLeft(t, "-"), "=")
			takes, known := s.long.lookup(name)
			if !known {
				return out, fmt.Sprintf("unknown option %s", t)
			}
			o := opt{name: "-" + name}
			if hasVal {
				o.value = &Word{Text: val, Static: true}
			} else if takes {
				if i+1 >= len(args) {
					return out, fmt.Sprintf("option %s needs a value", t)
				}
				i++
				v := args[i]
				o.value = &v
			}
			out.opts = append(out.opts, o)
			i++
			continue
		}
		if strings.HasPrefix(t, "--") {
			name, val, hasVal := strings.Cut(t[2:], "=")
			takes, known := s.long.lookup(name)
			if !known {
				if _, ok := s.optLong.lookup(name); !ok && !s.anyLong {
					return out, fmt.Sprintf("unknown option %s", t)
				}
				takes = false
			}
			o := opt{name: "--" + name}
			if hasVal {
				o.value = &Word{Text: val, Static: true}
			} else if takes {
				if i+1 >= len(args) {
					return out, fmt.Sprintf("option %s needs a value", t)
				}
				i++
				v := args[i]
				o.value = &v
			}
			out.opts = append(out.opts, o)
			i++
			continue
		}
		if len(t) > 1 && (t[0] == '-' || (s.plusFlags && t[0] == '+')) {
			if s.numeric && isNumber(t[1:]) {
				out.opts = append(out.opts, opt{name: "-n", value: &Word{Text: t[1:], Static: true}})
				i++
				continue
			}
			consumed := false
			for j := 1; j < len(t); j++ {
				ch := t[j]
				switch {
				case strings.IndexByte(s.flags, ch) >= 0:
					out.opts = append(out.opts, opt{name: "-" + string(ch)})
				case strings.IndexByte(s.query, ch) >= 0:
					out.opts = append(out.opts, opt{name: "-" + string(ch)})
					out.query = true
				case strings.IndexByte(s.optional, ch) >= 0:
					o := opt{name: "-" + string(ch)}
					if j+1 < len(t) {
						o.value = &Word{Text: t[j+1:], Static: true}
					}
					out.opts = append(out.opts, o)
					j = len(t)
				case strings.IndexByte(s.valued, ch) >= 0:
					o := opt{name: "-" + string(ch)}
					if j+1 < len(t) {
						o.value = &Word{Text: t[j+1:], Static: true}
					} else {
						if i+1 >= len(args) {
							return out, fmt.Sprintf("option -%c needs a value", ch)
						}
						v := args[i+1]
						o.value = &v
						consumed = true
					}
					out.opts = append(out.opts, o)
					j = len(t)
				default:
					return out, fmt.Sprintf("unknown option -%c in %s", ch, t)
				}
			}
			i++
			if consumed {
				i++
			}
			continue
		}
		break
	}
	for n := 0; n < s.operands && i < len(args); n++ {
		if !args[i].Static {
			return out, fmt.Sprintf("operand %s is not static", args[i].Text)
		}
		i++
	}
	if s.assigns {
		for i < len(args) {
			name, val, ok := assignWord(args[i])
			if !ok {
				break
			}
			out.assigns = append(out.assigns, Assign{Name: name, Value: val})
			i++
		}
	}
	out.rest = args[i:]
	return out, ""
}

// assignWord recognizes NAME=VALUE as env and sudo take it.
func assignWord(w Word) (string, Word, bool) {
	name, val, ok := strings.Cut(w.Text, "=")
	if !ok || name == "" || strings.HasPrefix(name, "-") {
		// env takes any NAME=VALUE, BASH_FUNC_f%%=… included.
		return "", Word{}, false
	}
	if !w.Static && !validName(name) {
		return "", Word{}, false
	}
	if !w.Static {
		// The name part is literal (it precedes the first expansion
		// only if the word starts with it); keep the value unknown.
		return name, Word{Text: val}, true
	}
	return name, Word{Text: val, Static: true}, true
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// longOpts lists long option names, name= for one that takes a value.
// Lists, not maps: the runners' tables are then laid out by the compiler
// instead of built each time the shim starts, before every command.
type longOpts []string

// lookup reports whether name is listed, and whether it takes a value.
func (l longOpts) lookup(name string) (takes, known bool) {
	for _, o := range l {
		switch {
		case o == name:
			return false, true
		case len(o) == len(name)+1 && o[len(name)] == '=' && o[:len(name)] == name:
			return true, true
		}
	}
	return false, false
}

// optNames is a set of option names, a list for the reason of longOpts.
type optNames []string

func (n optNames) has(name string) bool { return slices.Contains(n, name) }

// shells run a script given with -c, a script file, or standard input.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"rbash": true,
}

var shellSpec = &optSpec{
	// -c is handled by the caller from the parsed flags.
	flags: "abcCeEfhHiklmnpPrstTuvxB", valued: "oO", plusFlags: true,
	long: longOpts{"norc", "noprofile", "login", "posix", "restricted", "verbose", "version", "help",
		"debugger", "dump-strings", "dump-po-strings", "noediting", "pretty-print", "rcfile=",
		"init-file=", "no-rcs", "no-globalrcs", "interactive", "emulate="},
}

var suSpec = &optSpec{
	flags: "lmpfP", valued: "csgGwu",
	long: longOpts{"login", "preserve-environment", "command=", "session-command=", "shell=",
		"group=", "supp-group=", "pty", "whitelist-environment=", "fast", "user="},
}

// exec reports cmd, after unwrapping runners and following nested scripts.
func (w *walker) exec(cmd *Command, c ctx) {
	if len(cmd.Args) > 0 && cmd.Args[0].Static && cmd.Args[0].Glob && globProgram(cmd.Args[0].Text) {
		// The shell expands a pattern in program position (/???/r?,
		// /bin/r[m]) to whatever files match: the program is not known.
		args := append([]Word(nil), cmd.Args...)
		args[0].Static = false
		cmd.Args = args
	}
	if len(cmd.Args) > 0 && !cmd.Args[0].Static {
		// /proc/$$/fd/N is the shell's own descriptor N.
		for _, own := range []string{"/proc/$$/fd/", "/proc/$BASHPID/fd/", "/proc/${BASHPID}/fd/"} {
			if n, ok := strings.CutPrefix(cmd.Args[0].Text, own); ok && isNumber(n) {
				opened := *cmd
				opened.Args = append([]Word{{Text: "/dev/fd/" + n, Static: true}}, cmd.Args[1:]...)
				if file, ok := w.fdProgram(&opened); ok && !strings.HasPrefix(path.Clean(file.Text), "/proc/") && !strings.HasPrefix(path.Clean(file.Text), "/dev/") {
					opened.Args[0] = file
					w.exec(&opened, c)
				}
				break
			}
		}
	}
	if len(cmd.Args) == 0 || !cmd.Args[0].Static {
		w.emit(cmd)
		return
	}
	if p := path.Clean(cmd.Args[0].Text); strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/") {
		// /proc/self/fd/3, /proc/self/exe, /proc/1/root/usr/bin/git: a
		// program by descriptor or through another process's view,
		// whatever its name.
		if file, ok := w.fdProgram(cmd); ok && !strings.HasPrefix(path.Clean(file.Text), "/proc/") && !strings.HasPrefix(path.Clean(file.Text), "/dev/") {
			// A descriptor the line opened on a file runs that
			// file: /dev/fd/3 -rf / 3</bin/rm is rm -rf /.
			opened := *cmd
			opened.Args = append([]Word{file}, cmd.Args[1:]...)
			w.exec(&opened, c)
		}
		w.unknown(cmd, fmt.Sprintf("runs %s, a program not known statically", cmd.Args[0].Text))
		return
	}
	name := path.Base(cmd.Args[0].Text)
	args := cmd.Args[1:]
	if spec, ok := runners.lookup(name); ok {
		w.runner(name, spec, cmd, c)
		return
	}
	switch name {
	case "parallel", "sem":
		w.parallel(name, cmd, c)
		return
	case "tmux":
		w.tmux(cmd, c)
		return
	case "at", "batch":
		w.at(name, cmd, c)
		return
	}
	if subs, ok := subRunners[name]; ok {
		globals := jiriGlobals
		if name == "perf" {
			globals = perfGlobals
		}
		sp, why := globals.scan(args)
		if why == "" && len(sp.rest) > 0 && sp.rest[0].Static {
			if spec, ok := subs[sp.rest[0].Text]; ok {
				w.runArgs(name+" "+sp.rest[0].Text, spec, cmd, sp.rest[1:], c)
				return
			}
		} else if why != "" && len(args) > 0 {
			// Flags we cannot read may hide a runner subcommand.
			for _, a := range args {
				if _, ok := subs[a.Text]; ok {
					w.unknown(cmd, fmt.Sprintf("cannot tell what %s runs: %s", name, why))
					return
				}
			}
		}
		w.emit(cmd)
		return
	}
	if reason := w.builtinHazard(name, args); reason != "" {
		u := *cmd
		u.Unknown = reason
		w.emit(&u)
		// A callback is a command line: a deny inside still shows.
		for i, a := range args {
			if (name == "mapfile" || name == "readarray" || name == "complete" || name == "compgen") &&
				a.Static && strings.HasPrefix(a.Text, "-") && strings.HasSuffix(a.Text, "C") && i+1 < len(args) {
				w.nested(name+" -C", args[i+1], cmd, c)
				break
			}
		}
		return
	}
	switch {
	case shells[name]:
		w.shell(name, cmd, c)
	case name == "eval":
		if len(args) == 0 {
			w.emit(cmd)
			return
		}
		if args[0].Static && args[0].Text == "--" {
			args = args[1:]
		}
		w.nested("eval", joinWords(args), cmd, c)
	case name == "trap":
		w.trap(cmd, c)
	case name == "alias":
		w.emit(cmd)
		for _, a := range args {
			if n, v, ok := strings.Cut(a.Text, "="); ok && n != "" {
				val := Word{Text: v, Static: a.Static}
				w.nested("alias", val, cmd, c)
			}
		}
	case name == "su" || name == "runuser":
		w.su(name, cmd, c)
	case name == "find":
		w.find(cmd, c)
	case name == "gdb":
		w.gdb(cmd, c)
	case name == "git" || strings.HasPrefix(name, "git-"):
		w.emit(cmd)
		w.gitRuns(cmd, c)
	case name == "source" || name == ".":
		w.source(name, cmd, c)
	case name == "set" || name == "shift":
		// Positional parameters change: stop substituting them.
		if c.params != nil && (name == "shift" || setsParams(args)) {
			c.params.valid = false
		}
		w.emit(cmd)
	case name == "cd" || name == "pushd":
		w.emit(cmd)
		w.chdir(args)
	default:
		if l := interpreter(name); l == langPython {
			if argv, ok := pythonModule(cmd.Args[1:]); ok {
				// python -m pip is pip: what the module's program does.
				cmd.Alias = argv
			}
		}
		w.emit(cmd)
		if l := interpreter(name); l != langNone {
			w.interp(l, cmd, c)
		} else if strings.Contains(cmd.Args[0].Text, "/") {
			w.runShown("", cmd.Args[0].Text, cmd, c) // ./x.sh
		}
	}
}

// pythonModules are the modules python -m runs as the program of the same
// name (Command.Alias): what one does, the other does.
var pythonModules = map[string]string{
	"pip": "pip", "pytest": "pytest", "twine": "twine", "black": "black", "mypy": "mypy",
	"flake8": "flake8", "pylint": "pylint", "isort": "isort", "ruff": "ruff", "pipx": "pipx",
	"poetry": "poetry", "uv": "uv", "virtualenv": "virtualenv", "coverage": "coverage",
}

// pythonModule returns the argv of python [options] -m MODULE ARGS as the
// program MODULE runs it, for a module of pythonModules; ok is false for
// any other module or option, and for code given with -c.
func pythonModule(args []Word) (argv []Word, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static || !strings.HasPrefix(a.Text, "-") || len(a.Text) < 2 || strings.HasPrefix(a.Text, "--") {
			return nil, false
		}
		for j := 1; j < len(a.Text); j++ {
			switch ch := a.Text[j]; {
			case strings.IndexByte("bBdEhiIOPqsSuvV", ch) >= 0:
			case ch == 'W' || ch == 'X' || ch == 'm':
				val := a.Text[j+1:]
				if val == "" {
					if i++; i >= len(args) || !args[i].Static {
						return nil, false
					}
					val = args[i].Text
				}
				if ch != 'm' {
					j = len(a.Text)
					continue
				}
				prog, known := pythonModules[val]
				if !known {
					return nil, false
				}
				return append([]Word{{Text: prog, Static: true}}, args[i+1:]...), true
			default:
				return nil, false // -c, or an option not known
			}
		}
	}
	return nil, false
}

// inner reports the command a runner runs, as a new Command.
func (w *walker) inner(kind string, outer *Command, argv []Word, extra []Assign, c ctx) {
	inner := *outer
	inner.Args = argv
	if len(extra) > 0 {
		inner.Assigns = append(append([]Assign(nil), outer.Assigns...), extra...)
	}
	nest := make([]Frame, len(outer.Nesting), len(outer.Nesting)+1)
	copy(nest, outer.Nesting)
	inner.Nesting = append(nest, Frame{Kind: kind, Pos: outer.Pos})
	w.exec(&inner, c)
}

func (w *walker) unknown(cmd *Command, why string) {
	cmd.Unknown = why
	w.emit(cmd)
}

func (w *walker) runner(name string, spec *optSpec, cmd *Command, c ctx) {
	w.runArgs(name, spec, cmd, cmd.Args[1:], c)
}

// runArgs unwraps a runner whose own words after the program (and
// subcommand) are args.
func (w *walker) runArgs(name string, spec *optSpec, cmd *Command, args []Word, c ctx) {
	if name == "runcon" && len(args) > 0 && args[0].Static && !strings.HasPrefix(args[0].Text, "-") {
		// runcon CONTEXT COMMAND: without options the context comes first.
		cp := *spec
		cp.operands = 1
		spec = &cp
	}
	if name == "setarch" && len(args) > 0 && args[0].Static && !strings.HasPrefix(args[0].Text, "-") {
		// setarch ARCH [options] COMMAND: the architecture comes first.
		cp := *spec
		cp.operands = 0
		spec, args = &cp, args[1:]
	}
	if (name == "ccache" || name == "distcc") && (len(args) == 0 || strings.HasPrefix(args[0].Text, "-")) {
		w.emit(cmd) // the cache's own options, or distcc's default compiler
		return
	}
	if name == "sg" && len(args) > 0 && args[0].Text == "-" {
		args = args[1:]
	}
	sp, why := spec.scan(args)
	if why != "" {
		w.unknown(cmd, fmt.Sprintf("cannot tell what %s runs: %s", name, why))
		return
	}
	if sp.query {
		w.emit(cmd) // `command -v rm` runs nothing
		return
	}
	rest := sp.rest
	extra := sp.assigns
	dir, dirLost := "", false
	var scripts []Word
	var progs []string
	for _, o := range sp.opts {
		switch {
		case spec.writeOpts.has(o.name):
			cmd.Redirs = append(append([]Redirect(nil), cmd.Redirs...),
				Redirect{Op: o.name, Target: *o.value, Kind: writeKind(*o.value)})
		case spec.chdirOpts.has(o.name) && o.value != nil:
			dir = w.resolveDir(*o.value)
			dirLost = dir == ""
		case spec.scriptOpts.has(o.name) && o.value != nil:
			scripts = append(scripts, *o.value)
		case spec.progOpts.has(o.name):
			progs = append(progs, o.name)
		}
	}
	for _, a := range extra {
		if why := envHazard(a.Name); why != "" {
			// Reported, and what runs is still followed: a deny rule
			// may match inside.
			w.unknownCopy(cmd, fmt.Sprintf("%s sets %s: %s", name, a.Name, why))
			break
		}
	}
	if len(extra) > 0 {
		// env BASH_ENV='$(…)' bash, env PROMPT_COMMAND='…' bash -i.
		set := &Command{Assigns: extra, Redirs: cmd.Redirs, Pos: cmd.Pos, Nesting: cmd.Nesting, Source: cmd.Source, Dir: cmd.Dir}
		w.expansions(set, c)
		w.prompts(set, c)
	}
	if len(progs) > 0 {
		w.unknown(cmd, fmt.Sprintf("%s %s runs a program", name, progs[0]))
		return
	}
	switch name {
	case "env":
		for _, o := range sp.opts {
			switch o.name {
			case "-S", "--split-string":
				words, err := splitString(*o.value)
				if err != nil {
					w.unknown(cmd, fmt.Sprintf("cannot tell what env runs: -S %s", err))
					return
				}
				// The split words are env's own arguments again:
				// options (-C dir), assignments, then the command.
				again := *cmd
				again.Assigns = append(append([]Assign(nil), cmd.Assigns...), extra...)
				if dir != "" {
					again.Dir, again.Moved = dir, true
				}
				w.runArgs(name, spec, &again, append(words, rest...), c)
				return
			case "-P":
				// The command is looked up in another PATH.
				extra = append(extra, Assign{Name: "PATH", Value: *o.value})
			}
		}
	case "ionice":
		// ionice -p PID… changes a running process and runs nothing.
	case "xargs":
		rest = w.xargs(sp, rest, cmd, c)
	case "flock":
		// flock FILE -c COMMAND: -c comes after the file.
		if len(rest) > 0 && (rest[0].Text == "-c" || rest[0].Text == "--command") && rest[0].Static {
			if len(rest) < 2 {
				w.unknown(cmd, "flock -c without a command")
				return
			}
			scripts = append(scripts, rest[1])
			rest = nil
		}
	case "ssh":
		for _, o := range sp.opts {
			switch o.name {
			case "-o":
				if s, ok := sshCommandOption(*o.value); ok {
					scripts = append(scripts, s)
				}
				if k := strings.ToLower(strings.TrimLeft(o.value.Text, " \t")); strings.HasPrefix(k, "include") || !o.value.Static {
					w.unknown(cmd, fmt.Sprintf("ssh -o %s: options that cannot be read may run commands", o.value.Text))
					return
				}

			case "-N", "-s":
				// No command, or a subsystem name: ssh itself is
				// what runs.
				rest = nil
				cp := *spec
				cp.noCmd = ""
				spec = &cp
			}
		}
	case "watch":
		for _, o := range sp.opts {
			if o.name == "-x" || o.name == "--exec" {
				cp := *spec
				cp.join = false
				spec = &cp
			}
		}
	case "script":
		// script's operand is the file it writes, not a command.
		if len(rest) > 0 {
			t := rest[0]
			cmd.Redirs = append(append([]Redirect(nil), cmd.Redirs...), Redirect{Op: "script", Target: t, Kind: writeKind(t)})
			rest = nil
		}
	case "sg":
		if len(rest) > 0 && rest[0].Text == "-c" && rest[0].Static {
			rest = rest[1:]
		}
	case "entr":
		// entr -s 'script': the one argument is run by $SHELL.
		if hasOpt(sp.opts, "-s") {
			cp := *spec
			cp.join = true
			spec = &cp
		}
	case "envdir":
		extra = append(extra, Assign{Name: "PATH", Value: Word{Text: "(from envdir)"}})
	case "screen":
		if hasOpt(sp.opts, "-X") || hasOpt(sp.opts, "-x") || hasOpt(sp.opts, "-r") || hasOpt(sp.opts, "-R") {
			// Attaching or sending commands to a running session.
			w.unknown(cmd, "screen attaches to or drives a session whose commands cannot be seen")
			return
		}
	}
	if spec.keep {
		own := *cmd
		if len(rest) == 0 && len(scripts) == 0 && spec.noCmd != "" {
			own.Unknown = fmt.Sprintf("%s runs %s", name, spec.noCmd)
		}
		w.emit(&own)
	}
	for _, s := range scripts {
		w.nested(name+" -c", s, cmd, c)
	}
	if len(rest) == 0 {
		if !spec.keep {
			if len(scripts) == 0 && spec.noCmd != "" {
				cmd.Unknown = fmt.Sprintf("%s runs %s", name, spec.noCmd)
			}
			if len(scripts) == 0 || cmd.Unknown != "" {
				w.emit(cmd) // `env`, `nice`, `time` alone: the runner is the command
			}
		}
		return
	}
	inner := *cmd
	if dir != "" || dirLost {
		inner.Dir, inner.DirUnknown, inner.Moved = dir, dirLost, true
	}
	if spec.join {
		// The words are joined with spaces and run by a shell.
		w.nested(name, joinWords(rest), &inner, c)
		return
	}
	if spec.each {
		for _, r := range rest {
			w.nested(name, r, &inner, c)
		}
		return
	}
	w.inner(name, &inner, rest, extra, c)
}

// resolveDir returns the directory a runner's option names, resolved
// against the known working directory, or "" when it cannot be known.
func (w *walker) resolveDir(v Word) string {
	if !v.Static || v.Text == "" {
		return ""
	}
	d := v.Text
	switch {
	case d == "~" || strings.HasPrefix(d, "~/"):
		return "~" + strings.TrimSuffix(path.Clean("/"+d[1:]), "/")
	case strings.HasPrefix(d, "/"):
		return path.Clean(d)
	case w.cwd != "":
		return path.Join(w.cwd, d)
	case !w.cwdLost:
		// Relative to where the line starts (env -C .git).
		return path.Clean(d)
	}
	return ""
}

// sshCommandOption returns the local command line an ssh -o option runs
// (ProxyCommand, LocalCommand, KnownHostsCommand), as `Key=Value` or
// `Key Value`.
func sshCommandOption(v Word) (Word, bool) {
	t := strings.TrimLeft(v.Text, " \t")
	i := strings.IndexAny(t, "= \t")
	if i < 0 {
		return Word{}, false
	}
	switch strings.ToLower(t[:i]) {
	case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
	default:
		return Word{}, false
	}
	val := strings.TrimLeft(t[i:], "= \t")
	return Word{Text: val, Static: v.Static}, true
}

// xargs returns the command xargs runs: its own argv with the input appended
// (or substituted for the replace string), which is not static unless the
// input is (a here-string, a here-document, echo '…' |): then its words.
func (w *walker) xargs(sp split, rest []Word, cmd *Command, c ctx) []Word {
	if len(rest) == 0 {
		rest = []Word{{Text: "echo", Static: true}}
	}
	replace, plain := "", true
	for _, o := range sp.opts {
		switch o.name {
		case "-I", "--replace", "-i":
			replace = "{}"
			if o.value != nil && o.value.Text != "" {
				replace = o.value.Text
			}
		case "-a", "--arg-file", "-0", "--null", "-d", "--delimiter", "-E", "-e", "--eof":
			plain = false
		}
	}
	out := append([]Word(nil), rest...)
	if in, ok := staticStdin(cmd, c); ok && plain && !strings.ContainsAny(in, "'\"\\") {
		lines := strings.Split(strings.TrimRight(in, "\n"), "\n")
		switch {
		case replace == "":
			for _, f := range strings.Fields(in) {
				out = append(out, Word{Text: f, Static: true})
			}
			return out
		case len(lines) == 1:
			// -I {}: the one input line stands for {}.
			line := strings.TrimSpace(lines[0])
			for i, a := range out {
				if i > 0 && a.Static && strings.Contains(a.Text, replace) {
					out[i] = Word{Text: strings.ReplaceAll(a.Text, replace, line), Static: true}
				}
			}
			return out
		}
	}
	if replace == "" {
		return append(out, Word{Text: "{xargs input}", Split: true})
	}
	for i, a := range out {
		if i > 0 && strings.Contains(a.Text, replace) {
			out[i] = Word{Text: a.Text}
		}
	}
	return out
}

// staticStdin returns what a command reads on standard input when it is
// known statically: its last here-string or here-document on descriptor
// 0, else the static text piped into it.
func staticStdin(cmd *Command, c ctx) (string, bool) {
	for i := len(cmd.Redirs) - 1; i >= 0; i-- {
		r := cmd.Redirs[i]
		if n, op := redirFd(r.Op); n == 0 {
			switch op {
			case "<<<":
				return r.Target.Text + "\n", r.Target.Static
			case "<<", "<<-":
				return r.Target.Text, r.Target.Static
			}
			return "", false
		}
	}
	if c.stdin != nil && !c.stdin.used && c.stdin.text.Static {
		return c.stdin.text.Text, true
	}
	return "", false
}

// splitString splits env -S's argument into words as env does.
func splitString(w Word) ([]Word, error) {
	if !w.Static {
		return nil, fmt.Errorf("%s is not static", w.Text)
	}
	f, err := parse(w.Text)
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) == 0 {
		return nil, nil
	}
	if len(f.Stmts) != 1 {
		return nil, fmt.Errorf("%q is not one command", w.Text)
	}
	src := source{text: w.Text}
	var out []Word
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, fmt.Errorf("%q is not one command", w.Text)
	}
	for _, a := range call.Assigns {
		out = append(out, Word{Text: src.slice(a), Static: false})
	}
	out = append(out, words(call.Args, src)...)
	return out, nil
}

// shell follows `sh -c SCRIPT`, a script on a here-document, or reports a
// shell that reads a script nobody can see.
func (w *walker) shell(name string, cmd *Command, c ctx) {
	sp, why := shellSpec.scan(cmd.Args[1:])
	if why != "" {
		w.unknown(cmd, fmt.Sprintf("cannot read %s's options: %s", name, why))
		return
	}
	cmdMode, stdin, interactive, norc := false, false, false, false
	rcfile := ""
	for _, o := range sp.opts {
		switch o.name {
		case "-c":
			cmdMode = true
		case "-s":
			stdin = true
		case "-i", "--interactive":
			interactive = true
		case "--norc", "--no-rcs":
			norc = true
		case "--rcfile", "--init-file":
			rcfile = o.value.Text
		}
	}
	// Login shells (-l, the -lc harnesses send) read the user's own
	// profile; an interactive shell or an rcfile runs a file the line
	// may have chosen or written.
	switch {
	case rcfile != "" && !norc:
		for _, o := range sp.opts {
			if o.value == nil || o.name != "--rcfile" && o.name != "--init-file" {
				continue
			}
			if text, ok := procScript(*o.value); ok {
				w.nested(name+" --rcfile", text, cmd, c) // --rcfile <(printf 'CMD')
			}
		}
		w.unknown(cmd, fmt.Sprintf("%s runs the startup file %s", name, rcfile))
		return
	case interactive && !norc:
		w.unknown(cmd, fmt.Sprintf("interactive %s runs its startup file", name))
		return
	}
	switch {
	case cmdMode:
		if len(sp.rest) == 0 {
			w.unknown(cmd, fmt.Sprintf("%s -c without a script", name))
			return
		}
		// The words after the script are $0, $1, …: known here.
		inner := c
		inner.zsh = name == "zsh"
		inner.params = &params{words: []Word{{Text: name, Static: true}}, valid: true}
		if len(sp.rest) > 1 {
			inner.params.words = sp.rest[1:]
		}
		w.nested(name+" -c", sp.rest[0], cmd, inner)
	case len(sp.rest) > 0 && !stdin:
		script := sp.rest[0]
		if text, ok := procScript(script); ok {
			w.nested(name+" <( )", text, cmd, c)
			return
		}
		if !script.Static {
			w.unknown(cmd, fmt.Sprintf("%s runs a script that cannot be read: %s", name, script.Text))
			return
		}
		if fd, ok := fdPath(script.Text); ok {
			c.zsh = name == "zsh"
			w.fdScript(name, fd, cmd, c)
			return
		}
		w.emit(cmd) // a script file: the shell command is what is matched
		w.runShown(name, script.Text, cmd, c)
	default:
		c.zsh = name == "zsh"
		w.fdScript(name, 0, cmd, c)
	}
}

// fdPath reports a script path that names an open file descriptor.
func fdPath(p string) (int, bool) {
	switch p {
	case "-", "/dev/stdin":
		return 0, true
	}
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(p, prefix); ok && isNumber(n) && len(n) < 4 {
			v := 0
			for _, r := range n {
				v = v*10 + int(r-'0')
			}
			return v, true
		}
	}
	return 0, false
}

// redirFd returns the descriptor a redirection applies to.
func redirFd(op string) (int, string) {
	i := 0
	for i < len(op) && op[i] >= '0' && op[i] <= '9' {
		i++
	}
	if i == 0 {
		if strings.HasPrefix(op, "<") {
			return 0, op
		}
		return 1, op
	}
	v := 0
	for _, r := range op[:i] {
		v = v*10 + int(r-'0')
		if v > 1000 {
			return -1, op[i:]
		}
	}
	return v, op[i:]
}

// fdScript follows the script a shell (or source) reads from descriptor
// fd: a here-document or here-string on it, or, for standard input, text
// piped in by a static echo, printf or cat; anything else is unknown.
func (w *walker) fdScript(name string, fd int, cmd *Command, c ctx) {
	for i := len(cmd.Redirs) - 1; i >= 0; i-- {
		r := cmd.Redirs[i]
		n, op := redirFd(r.Op)
		if n != fd {
			continue
		}
		switch op {
		case "<<", "<<-", "<<<":
			kind := "here-doc"
			if op == "<<<" {
				kind = "here-string"
			}
			// The shell reads the document as its script, not as
			// the input of the commands in it.
			fed := *cmd
			fed.Redirs = append(append([]Redirect(nil), cmd.Redirs[:i]...), cmd.Redirs[i+1:]...)
			w.nested(name+" "+kind, r.Target, &fed, c)
			return
		}
		if text, ok := procScript(r.Target); ok && op == "<" {
			// bash < <(printf 'git push -f'): the static text.
			fed := *cmd
			fed.Redirs = append(append([]Redirect(nil), cmd.Redirs[:i]...), cmd.Redirs[i+1:]...)
			w.nested(name+" <( )", text, &fed, c)
			return
		}
		w.unknown(cmd, fmt.Sprintf("%s reads its script from %s%s", name, r.Op, r.Target.Text))
		return
	}
	if fd == 0 && c.stdin != nil && !c.stdin.used {
		c.stdin.used = true
		w.nested(name+" stdin", c.stdin.text, cmd, c)
		return
	}
	if fd == 0 {
		w.unknown(cmd, fmt.Sprintf("%s reads its script from standard input", name))
		return
	}
	w.unknown(cmd, fmt.Sprintf("%s reads its script from descriptor %d", name, fd))
}

// su and runuser take options anywhere (su - root -c 'cmd'): look for the
// command in every word, and refuse options they do not have.
// gitRuns follows the commands git itself runs through a shell:
// git submodule foreach CMD, git rebase -x/--exec CMD, git bisect run CMD.
// git's own options before the subcommand are skipped by value shape only
// (the matcher reads them properly); a subcommand word is one of these.
func (w *walker) gitRuns(cmd *Command, c ctx) {
	args := cmd.Args[1:]
	if sub, ok := strings.CutPrefix(path.Base(cmd.Args[0].Text), "git-"); ok {
		args = append([]Word{{Text: sub, Static: true}}, args...)
	}
	for i := 0; i < len(args); i++ {
		switch args[i].Text {
		case "submodule":
			for j := i + 1; j < len(args); j++ {
				if args[j].Text == "foreach" {
					rest := args[j+1:]
					for len(rest) > 0 && (rest[0].Text == "--recursive" || rest[0].Text == "-q" || rest[0].Text == "--quiet" || rest[0].Text == "--") {
						rest = rest[1:]
					}
					if len(rest) > 0 {
						w.nested("git submodule foreach", joinWords(rest), cmd, c)
					}
					return
				}
			}
			return
		case "rebase":
			rest := args[i+1:]
			for j := 0; j < len(rest); j++ {
				t := rest[j].Text
				switch {
				case t == "-x" || t == "--exec":
					if j+1 < len(rest) {
						w.nested("git rebase --exec", rest[j+1], cmd, c)
						j++
					}
				case strings.HasPrefix(t, "--exec="):
					w.nested("git rebase --exec", Word{Text: t[len("--exec="):], Static: rest[j].Static}, cmd, c)
				case strings.HasPrefix(t, "-x") && len(t) > 2:
					w.nested("git rebase --exec", Word{Text: t[2:], Static: rest[j].Static}, cmd, c)
				}
			}
			return
		case "bisect":
			if i+1 < len(args) && args[i+1].Text == "run" && i+2 < len(args) {
				w.inner("git bisect run", cmd, args[i+2:], nil, c)
			}
			return
		}
		if !strings.HasPrefix(args[i].Text, "-") && i > 0 && !strings.HasPrefix(args[i-1].Text, "-") {
			return // a subcommand that runs nothing of its own
		}
	}
}

// procScript returns the script a process substitution argument holds
// when its one command writes static text (bash <(printf 'git push -f')):
// the shell runs that text.
func procScript(w Word) (Word, bool) {
	if w.Static || !strings.HasPrefix(w.Text, "<(") || !strings.HasSuffix(w.Text, ")") {
		return Word{}, false
	}
	f, err := parse(w.Text)
	if err != nil || len(f.Stmts) != 1 {
		return Word{}, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 || len(call.Args[0].Parts) != 1 {
		return Word{}, false
	}
	ps, ok := call.Args[0].Parts[0].(*syntax.ProcSubst)
	if !ok || ps.Op != syntax.CmdIn || len(ps.Stmts) != 1 {
		return Word{}, false
	}
	return pipeText(ps.Stmts[0], source{text: w.Text})
}

// stdinPath reports a script argument that names standard input.
func stdinPath(w Word) bool {
	switch w.Text {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return w.Static
	}
	return false
}

// source runs a script file in the current shell: one that cannot be read
// (a substitution, standard input) is unknown.
func (w *walker) source(name string, cmd *Command, c ctx) {
	args := cmd.Args[1:]
	if len(args) > 0 && args[0].Static && args[0].Text == "--" {
		args = args[1:]
	}
	if len(args) > 0 && args[0].Static {
		if fd, ok := fdPath(args[0].Text); ok {
			w.fdScript(name, fd, cmd, c)
			return
		}
	}
	if len(args) > 0 {
		if text, ok := procScript(args[0]); ok {
			w.nested(name+" <( )", text, cmd, c)
			return
		}
	}
	if len(args) > 0 && (!args[0].Static || stdinPath(args[0])) {
		w.unknown(cmd, fmt.Sprintf("%s runs a script that cannot be read: %s", name, args[0].Text))
		return
	}
	w.emit(cmd)
	if len(args) > 0 {
		w.runShown(name, args[0].Text, cmd, c)
	}
}

func (w *walker) su(name string, cmd *Command, c ctx) {
	args := cmd.Args[1:]
	if name == "runuser" {
		// runuser -u USER [--] COMMAND runs COMMAND itself.
		if sp, why := suSpec.scan(args); why == "" && len(sp.rest) > 0 {
			for _, o := range sp.opts {
				if o.name == "-u" || o.name == "--user" {
					w.inner(name, cmd, sp.rest, nil, c)
					return
				}
			}
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			w.unknown(cmd, fmt.Sprintf("cannot tell what %s runs: %s is not static", name, a.Text))
			return
		}
		t := a.Text
		if t == "--" {
			break
		}
		if t == "-" || !strings.HasPrefix(t, "-") {
			continue // login shell, or the user
		}
		sp, why := suSpec.scan(args[i:min(i+2, len(args))])
		if why != "" {
			w.unknown(cmd, fmt.Sprintf("cannot tell what %s runs: %s", name, why))
			return
		}
		for _, o := range sp.opts {
			switch o.name {
			case "-c", "--command", "--session-command":
				w.nested(name+" -c", *o.value, cmd, c)
				return
			}
		}
		if len(sp.rest) == 0 {
			i++ // the option consumed the next word
		}
	}
	w.emit(cmd)
}

func (w *walker) trap(cmd *Command, c ctx) {
	args := cmd.Args[1:]
	if len(args) > 0 && args[0].Text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || strings.HasPrefix(args[0].Text, "-") && args[0].Static {
		w.emit(cmd)
		return
	}
	w.nested("trap", args[0], cmd, c)
}

// find reports find itself (without its -exec clauses) and each command
// it would run; {} is the found path, not static.
func (w *walker) find(cmd *Command, c ctx) {
	own := *cmd
	own.Args = nil
	var execs [][]Word
	var kinds []string
	args := cmd.Args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a.Text {
		case "-exec", "-execdir", "-ok", "-okdir":
			var argv []Word
			j := i + 1
			for ; j < len(args); j++ {
				t := args[j].Text
				if t == ";" || (t == "+" && j > i+1 && strings.Contains(args[j-1].Text, "{}")) {
					break
				}
				word := args[j]
				if strings.Contains(word.Text, "{}") {
					word = Word{Text: word.Text}
				}
				argv = append(argv, word)
			}
			if len(argv) > 0 {
				execs = append(execs, argv)
				kinds = append(kinds, "find "+a.Text)
			}
			i = j
			continue
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				t := args[i+1]
				own.Redirs = append(append([]Redirect(nil), own.Redirs...), Redirect{Op: a.Text, Target: t, Kind: writeKind(t)})
			}
		}
		own.Args = append(own.Args, a)
		// A primary's value is data, even when it looks like an
		// action: find . -name -delete matches files named -delete.
		if n := findValues(a.Text); n > 0 && a.Static {
			for k := 0; k < n && i+1 < len(args); k++ {
				i++
				own.Args = append(own.Args, args[i])
			}
		}
	}
	w.emit(&own)
	for n, argv := range execs {
		w.inner(kinds[n], cmd, argv, nil, c)
	}
}

// nested parses and walks a script run by cmd (bash -c, eval, …).
func (w *walker) nested(kind string, script Word, cmd *Command, c ctx) {
	if c.depth+1 > maxDepth {
		w.unknown(cmd, fmt.Sprintf("nested deeper than %d scripts", maxDepth))
		return
	}
	if !script.Static {
		w.unknown(cmd, fmt.Sprintf("%s script is not static: %s", kind, script.Text))
		return
	}
	// Nested scripts re-read text the line holds (eval eval … reads
	// it once per level): a budget keeps the total linear in the line.
	if w.budget -= len(script.Text); w.budget < 0 {
		w.unknown(cmd, fmt.Sprintf("nested scripts longer than %d times the line", nestedBudget))
		return
	}
	f, err := parseDialect(script.Text, c.zsh)
	if err != nil {
		w.unknown(cmd, fmt.Sprintf("%s script does not parse: %v", kind, err))
		return
	}
	inner := c
	inner.depth++
	inner.redirs = cmd.Redirs
	nest := make([]Frame, len(cmd.Nesting), len(cmd.Nesting)+1)
	copy(nest, cmd.Nesting)
	inner.nesting = append(nest, Frame{Kind: kind, Pos: cmd.Pos})
	if cmd.Dir != "" && cmd.Dir != w.cwd || cmd.DirUnknown && !w.cwdLost {
		// The script runs where its command does (env -C .git sh -c
		// '…', sudo -D /tmp sh -c '…').
		saved, savedLost := w.cwd, w.cwdLost
		w.cwd, w.cwdLost = cmd.Dir, cmd.DirUnknown
		defer func() { w.cwd, w.cwdLost = saved, savedLost }()
	}
	w.file(f, script.Text, inner)
}

// joinWords joins eval's arguments with spaces, as eval does.
func joinWords(args []Word) Word {
	out := Word{Static: true}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.Text
		if !a.Static {
			out.Static = false
		}
	}
	out.Text = strings.Join(parts, " ")
	return out
}

// setsParams reports a set command that replaces the positional
// parameters: set -- a b, set a b.
func setsParams(args []Word) bool {
	for _, a := range args {
		if !a.Static || a.Text == "--" || a.Text == "-" {
			return true
		}
		if !strings.HasPrefix(a.Text, "-") && !strings.HasPrefix(a.Text, "+") {
			return true
		}
	}
	return false
}

// findValues is how many words a find primary takes as its value.
func findValues(p string) int {
	switch p {
	case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
		"-lname", "-ilname", "-newer", "-anewer", "-cnewer", "-perm", "-type", "-xtype", "-user",
		"-group", "-uid", "-gid", "-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin",
		"-used", "-links", "-inum", "-samefile", "-maxdepth", "-mindepth", "-fstype", "-context",
		"-regextype", "-printf", "-fprint", "-fprint0", "-fls", "-files0-from":
		return 1
	case "-fprintf":
		return 2
	}
	if strings.HasPrefix(p, "-newer") && len(p) == len("-newerXY") {
		return 1
	}
	return 0
}

// hasOpt reports whether a scanned option is present.
func hasOpt(opts []opt, name string) bool {
	for _, o := range opts {
		if o.name == name {
			return true
		}
	}
	return false
}

// tmuxShellCommands are tmux commands whose arguments are shell commands
// or keys typed into a shell.
var tmuxShellCommands = map[string]bool{
	"new-session": true, "new": true, "new-window": true, "neww": true, "split-window": true,
	"splitw": true, "respawn-pane": true, "respawnp": true, "respawn-window": true, "respawnw": true,
	"run-shell": true, "run": true, "display-popup": true, "popup": true, "if-shell": true, "if": true,
	"pipe-pane": true, "pipep": true, "send-keys": true, "send": true, "source-file": true, "source": true,
}

// tmuxShellSetters set what a new pane's shell runs (default-command,
// default-shell, its environment) or a command a hook runs later.
var tmuxShellSetters = map[string]bool{
	"default-command": true, "default-shell": true, "set-hook": true, "set-environment": true, "setenv": true,
}

// tmuxStarts are the tmux commands that start a shell in a new pane, with
// their flags and the options that take a value; what follows them is
// the shell command, the default shell when there is none.
var tmuxStarts = map[string][2]string{
	"new-session": {"AdDEPX", "cfFnstxy"}, "new": {"AdDEPX", "cfFnstxy"},
	"new-window": {"abdkPS", "cFnt"}, "neww": {"abdkPS", "cFnt"},
	"split-window": {"bdfhIvPZ", "cFlpt"}, "splitw": {"bdfhIvPZ", "cFlpt"},
	"respawn-pane": {"k", "ct"}, "respawnp": {"k", "ct"},
	"respawn-window": {"k", "ct"}, "respawnw": {"k", "ct"},
}

// tmuxDefaultShell reports a tmux line of one command that starts the
// default shell in a new pane: no shell command, no environment for it
// (-e), no configuration file or command (tmux -f, -c), every option read.
func tmuxDefaultShell(args []Word) bool {
	i := 0
	for i < len(args) && args[i].Static && strings.HasPrefix(args[i].Text, "-") {
		switch args[i].Text {
		case "-2", "-u", "-v", "-l", "-N":
			i++
		case "-L", "-S":
			i += 2
		default:
			return false // -f FILE, -c COMMAND, …
		}
	}
	if i >= len(args) || !args[i].Static {
		return false
	}
	spec, ok := tmuxStarts[args[i].Text]
	if !ok {
		return false
	}
	for i++; i < len(args); i++ {
		a := args[i]
		if !a.Static || !strings.HasPrefix(a.Text, "-") || len(a.Text) < 2 || a.Text == "--" {
			return false // a shell command, or a word not known
		}
		for j := 1; j < len(a.Text); j++ {
			ch := a.Text[j]
			switch {
			case strings.IndexByte(spec[0], ch) >= 0:
			case strings.IndexByte(spec[1], ch) >= 0:
				if j == len(a.Text)-1 {
					// The value is the next word: one that may split
					// into more could hold a shell command.
					if i++; i >= len(args) || !args[i].Static || args[i].Split {
						return false
					}
				}
				j = len(a.Text)
			default:
				return false // -e VAR=VALUE, or an option not known
			}
		}
	}
	return i <= len(args)
}

// tmux reports tmux, unknown when it runs a shell command (its commands'
// flags differ too much to find the command for sure), and follows every
// argument that looks like a command line so a deny inside still shows.
func (w *walker) tmux(cmd *Command, c ctx) {
	args := cmd.Args[1:]
	if tmuxDefaultShell(args) {
		// A pane with the default shell: nothing runs until keys are
		// sent to it (send-keys is decided when it comes).
		w.emit(cmd)
		return
	}
	sub := ""
	for i, a := range args {
		if !a.Static {
			w.unknown(cmd, fmt.Sprintf("cannot tell what tmux runs: %s is not static", a.Text))
			return
		}
		t := strings.TrimSuffix(a.Text, ";")
		if t == "-c" && sub == "" && i+1 < len(args) {
			sub = "-c" // tmux -c 'shell command'
		}
		if tmuxShellCommands[t] || tmuxShellSetters[t] {
			sub = t
		}
	}
	if sub == "" {
		w.emit(cmd)
		return
	}
	u := *cmd
	u.Unknown = fmt.Sprintf("tmux %s runs a shell command", sub)
	w.emit(&u)
	for _, a := range args {
		if strings.ContainsAny(a.Text, " \t;|&") {
			w.nested("tmux", a, cmd, c)
		}
	}
}

// at and batch read the commands they run later from standard input or a
// file.
func (w *walker) at(name string, cmd *Command, c ctx) {
	own := *cmd
	for _, a := range cmd.Args[1:] {
		if a.Static && (a.Text == "-l" || a.Text == "-r" || a.Text == "-d" || a.Text == "-c") {
			w.emit(&own) // atq, atrm, showing a job: nothing new runs
			return
		}
		if a.Static && strings.HasPrefix(a.Text, "-") && strings.Contains(a.Text, "f") {
			own.Unknown = fmt.Sprintf("%s runs the commands in a file later", name)
			w.emit(&own)
			return
		}
	}
	w.emit(&own)
	w.fdScript(name, 0, cmd, c)
}

// gdbValued are gdb's options that take a value (spelled with one dash
// or two); gdbCommands those whose value is a gdb command.
var (
	gdbValued = optNames{"ex", "eval-command", "iex", "init-eval-command", "x", "command", "ix", "init-command",
		"p", "pid", "c", "core", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "b", "l",
		"data-directory", "D", "tty", "t", "interpreter", "i"}
	gdbCommands = optNames{"ex", "eval-command", "iex", "init-eval-command"}
)

// gdb reports gdb and what it runs: the program after --args with its
// arguments, and the commands its -ex options give that run something:
// run ARGS (the program, with ARGS, through a shell), shell CMD and !CMD.
// The matcher decides the other gdb commands (code it does not read).
func (w *walker) gdb(cmd *Command, c ctx) {
	w.emit(cmd)
	args := cmd.Args[1:]
	var cmds []Word
	prog := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static {
			if strings.HasPrefix(a.Text, "-") || a.Split {
				return // an option nobody can read: the matcher asks
			}
			if prog < 0 {
				prog = i
			}
			continue
		}
		t := a.Text
		if t == "--args" || t == "-args" {
			if i+1 < len(args) {
				w.inner("gdb --args", cmd, args[i+1:], nil, c)
			}
			prog = -1 // run's arguments are replaced by --args'
			break
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			name, val, hasVal := strings.Cut(strings.TrimLeft(t, "-"), "=")
			switch {
			case hasVal && gdbCommands.has(name):
				cmds = append(cmds, Word{Text: val, Static: true})
			case !hasVal && gdbValued.has(name) && i+1 < len(args):
				if gdbCommands.has(name) {
					cmds = append(cmds, args[i+1])
				}
				i++
			}
			continue
		}
		if prog < 0 {
			prog = i
		}
	}
	for _, x := range cmds {
		t := strings.TrimSpace(x.Text)
		if !x.Static || t == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(t, "!"); ok {
			w.nested("gdb !", Word{Text: rest, Static: true}, cmd, c)
			continue
		}
		word, rest, _ := strings.Cut(t, " ")
		switch word {
		case "shell":
			w.nested("gdb shell", Word{Text: rest, Static: true}, cmd, c)
		case "run", "r", "start", "starti":
			if prog >= 0 && args[prog].Static {
				q, err := syntax.Quote(args[prog].Text, syntax.LangBash)
				if err == nil {
					w.nested("gdb "+word, Word{Text: q + " " + rest, Static: true}, cmd, c)
				}
			}
		}
	}
}
