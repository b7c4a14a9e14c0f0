package matcher

import (
	"fmt"
	"path"
	"strings"

	"github.com/agent-shim/agent-shim/shellparse"
)

// call is a command reduced to what rules compare: the program's basename,
// its arguments split into positionals and flags, and the reasons it can be
// at most asked about (floors).
type call struct {
	prog    string   // basename; git-push is git with a leading "push" word
	key     string   // flagNames key: prog, or "git <subcommand>"
	argv    []string // normalized argv for display
	toks    []tok    // arguments after the program (and git's global options)
	trusted bool     // program found on PATH or in a system directory
	floors  []string // why the command is at least Ask
	blocks  []string // why an allow rule may not allow it (it is Ask instead)
	words   []shellparse.Word
	rest    []shellparse.Word // the words after the program and git's global options
	joined  string            // the words joined for regex rules, once computed
}

// text is the command's words after quote removal, joined with spaces and
// quoted where needed, as regex grants see it.
func (c *call) text() string {
	if c.joined == "" && len(c.words) > 0 {
		c.joined = quoteJoin(c.words)
	}
	return c.joined
}

type tokKind int

const (
	posTok  tokKind = iota // a positional word
	flagTok                // one or more flags
	wildTok                // a word not known statically
)

type tok struct {
	kind  tokKind
	text  string   // positional text (cleaned by the caller when compared)
	flags []string // canonical flag names (flagTok)
	long  string   // the long name as written (flagTok)
	// abbrev is a long option the program's table does not know, which
	// getopt and git accept as an abbreviation of a longer one (--forc).
	abbrev string
	flag   bool // wildTok: could be a flag (before --)
	// resolved is a relative positional joined to the known working
	// directory (cd / && rm -rf * removes /*).
	resolved string
	word     shellparse.Word
}

// floor records why the command is at least Ask, whatever the rules say.
func (c *call) floor(format string, args ...any) {
	c.floors = append(c.floors, fmt.Sprintf(format, args...))
}

// block records why an allow rule may not allow the command: it is then
// Ask, while a command no rule matches stays Default.
func (c *call) block(format string, args ...any) {
	c.blocks = append(c.blocks, fmt.Sprintf(format, args...))
}

// newCall normalizes a command's words. It never fails: what it cannot read
// becomes a floor.
func newCall(words []shellparse.Word, dir string) *call {
	c := &call{words: words}
	if len(words) == 0 {
		return c
	}
	prog := words[0]
	if !prog.Static {
		c.floor("program is not known statically: %s", prog.Text)
		// $HOME/bin/rm is rm wherever $HOME is: with a literal last
		// element the name is known, so deny and ask rules still apply
		// (the floor keeps any allow rule from allowing it).
		if i := strings.LastIndexByte(prog.Text, '/'); i >= 0 && wordLike(prog.Text[i+1:]) && !strings.ContainsAny(prog.Text[i+1:], "$`'\"\\") {
			words = append([]shellparse.Word{{Text: prog.Text[i+1:], Static: true}}, words[1:]...)
			c.words = words
			prog = words[0]
		} else {
			c.argv = []string{prog.Text}
			for _, w := range words[1:] {
				c.argv = append(c.argv, w.Text)
			}
			return c
		}
	}
	progDir, base := path.Split(prog.Text)
	progDir = strings.TrimSuffix(progDir, "/")
	c.trusted = progDir == "" || systemDirs[path.Clean(progDir)]
	if !c.trusted {
		c.block("runs %s by path, not %s from PATH", prog.Text, base)
	}
	rest := words[1:]
	// Case-insensitive file systems run RM as rm: compare names folded.
	base = strings.ToLower(base)
	c.prog = base
	if sub, ok := strings.CutPrefix(base, "git-"); ok && sub != "" {
		c.prog = "git"
		rest = append([]shellparse.Word{{Text: sub, Static: true}}, rest...)
	}
	c.argv = []string{c.prog}
	if c.prog == "git" {
		rest = c.gitGlobals(rest)
	}
	c.key = c.prog
	if c.prog == "git" && len(rest) > 0 && rest[0].Static {
		c.key = "git " + rest[0].Text
	}
	c.rest = rest
	c.toks = tokens(c.key, rest, dir)
	for _, w := range rest {
		c.argv = append(c.argv, w.Text)
	}
	c.programFloors()
	return c
}

// gitGlobals skips git's options before the subcommand, flooring the ones
// that make git run something else.
func (c *call) gitGlobals(args []shellparse.Word) []shellparse.Word {
	for len(args) > 0 {
		a := args[0]
		if !a.Static {
			if strings.HasPrefix(a.Text, "-") || a.Split || canBeFlag(a) {
				c.floor("git option is not known statically: %s", a.Text)
			}
			return args
		}
		name, val, hasVal := strings.Cut(a.Text, "=")
		switch {
		case gitGlobalValued[name]:
			if !hasVal {
				if len(args) < 2 {
					return args[1:]
				}
				val = args[1].Text
				if !args[1].Static {
					c.floor("git %s value is not known statically: %s", name, val)
				}
				args = args[1:]
			}
			switch name {
			case "-c":
				key, _, _ := strings.Cut(val, "=")
				if !gitKeySafe(key) {
					c.floor("git -c %s can make git run a command", key)
				}
			case "--config-env":
				c.floor("git --config-env sets configuration from the environment")
			}
			args = args[1:]
		case name == "--exec-path" && hasVal:
			c.floor("git --exec-path changes where git finds its commands")
			args = args[1:]
		case gitGlobalFlags[a.Text]:
			args = args[1:]
		default:
			if strings.HasPrefix(a.Text, "-") && len(a.Text) > 1 && !isHelpOrVersion(a.Text) {
				// A global option git does not have: it will refuse
				// to run, but do not guess which word is the subcommand.
				c.floor("unknown git option %s", a.Text)
			}
			return args
		}
	}
	return args
}

func isHelpOrVersion(s string) bool {
	switch s {
	case "-h", "--help", "-v", "--version":
		return true
	}
	return false
}

// canBeFlag reports whether a word that is not static could expand to
// something starting with a dash.
func canBeFlag(w shellparse.Word) bool {
	if w.Static {
		return strings.HasPrefix(w.Text, "-")
	}
	if w.Text == "" {
		return true
	}
	switch w.Text[0] {
	case '$', '"', '\'', '`', '-', '\\', '{':
		return true
	}
	return false
}

// tokens splits arguments into positionals, flags and unknown words. dir,
// when known, resolves relative positionals.
func tokens(key string, args []shellparse.Word, dir string) []tok {
	out := make([]tok, 0, len(args))
	prog, _, _ := strings.Cut(key, " ")
	aliases := flagNames[key]
	valued := valuedShort[key]
	single := singleDash[prog]
	endOpts := false
	for _, a := range args {
		if !a.Static {
			out = append(out, tok{kind: wildTok, flag: !endOpts && canBeFlag(a), word: a})
			continue
		}
		t := a.Text
		switch {
		case endOpts || len(t) < 2 || t[0] != '-':
			if key == "git push" && strings.HasPrefix(t, "+") && len(t) > 1 {
				// git push +ref is a forced update of ref.
				out = append(out, tok{kind: flagTok, flags: []string{"force"}})
				out = append(out, tok{kind: posTok, text: t[1:], word: a})
				continue
			}
			pt := tok{kind: posTok, text: t, word: a}
			if dir != "" && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") {
				pt.resolved = path.Join(dir, t)
			}
			out = append(out, pt)
		case t == "--":
			endOpts = true
		case strings.HasPrefix(t, "--") || single:
			name, _, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
			t := tok{kind: flagTok, flags: canon(aliases, name), long: name, word: a}
			if _, known := aliases[name]; !known && len(name) >= 2 {
				t.abbrev = name
			}
			out = append(out, t)
		default:
			var flags []string
			for i := 1; i < len(t); i++ {
				ch := t[i : i+1]
				flags = append(flags, canon(aliases, ch)...)
				if strings.Contains(valued, ch) {
					break // the rest of the cluster is this option's value
				}
			}
			out = append(out, tok{kind: flagTok, flags: flags, word: a})
		}
	}
	return out
}

func canon(aliases map[string][]string, name string) []string {
	if c, ok := aliases[name]; ok {
		return c
	}
	return []string{name}
}

// programFloors applies what is known about particular programs: options
// that make them run or write something.
func (c *call) programFloors() {
	switch c.key {
	case "git config":
		read := false
		for _, t := range c.toks {
			if t.kind == flagTok && strings.HasPrefix(t.long, "get") {
				read = true
			}
			if t.kind == posTok && (t.text == "get" || t.text == "list") {
				read = true
			}
		}
		for _, t := range c.toks[min(1, len(c.toks)):] {
			if t.kind == posTok && strings.Contains(t.text, ".") && !gitKeySafe(t.text) && !read {
				c.floor("git config %s can make git run a command", t.text)
				break
			}
			if t.kind == wildTok && !read {
				c.floor("git config key is not known statically")
				break
			}
		}
	case "git log", "git diff", "git show", "git format-patch":
		for _, t := range c.toks {
			if t.kind == flagTok && (t.long == "output" || t.long == "output-directory") {
				c.floor("writes a file (--%s)", t.long)
			}
			if t.kind == wildTok && t.flag {
				c.floor("an argument not known statically could be --output: %s", t.word.Text)
			}
		}
	case "sed":
		c.sedFloors()
	case "tee":
		for _, t := range c.toks {
			if (t.kind == posTok && t.text != "/dev/null") || t.kind == wildTok {
				c.floor("tee writes a file")
				break
			}
		}
	case "sort":
		for _, t := range c.toks {
			if t.kind == flagTok && (contains(t.flags, "o") || t.long == "output") {
				c.floor("sort -o writes a file")
			}
		}
	case "alias":
		for _, t := range c.toks {
			if strings.Contains(t.word.Text, "=") {
				c.floor("defines an alias, changing what later words run")
				break
			}
		}
	default:
		c.interpreterBlocks()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// interpreters run code given on their command line with these options.
var interpreters = map[string][]string{
	"python": {"c"}, "perl": {"e", "E"}, "ruby": {"e"}, "node": {"e", "p", "eval", "print"},
	"nodejs": {"e", "p", "eval", "print"}, "deno": {"eval"}, "bun": {"e", "eval"},
	"php": {"r"}, "lua": {"e"}, "osascript": {"e"}, "Rscript": {"e"},
	"awk": {}, "gawk": {}, "mawk": {}, "nawk": {},
}

// interpreterBlocks keeps inline code (python -c, perl -e, node -e, awk
// programs) from being allowed by a rule about the interpreter: what the
// code does cannot be read.
func (c *call) interpreterBlocks() {
	name := strings.TrimRight(c.prog, "0123456789.")
	opts, ok := interpreters[name]
	if !ok {
		return
	}
	if strings.HasSuffix(name, "awk") {
		c.block("%s runs an inline program", c.prog)
		return
	}
	for _, t := range c.toks {
		if t.kind != flagTok {
			continue
		}
		for _, f := range t.flags {
			if contains(opts, f) {
				c.block("%s runs inline code (-%s)", c.prog, f)
				return
			}
		}
	}
}
