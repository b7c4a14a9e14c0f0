package matcher

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
	"mvdan.cc/sh/v3/syntax"
)

// call is a command reduced to what rules compare: the program's basename,
// its arguments split into positionals and flags, and the reasons it can be
// at most asked about (floors).
type call struct {
	prog    string   // basename; git-push is git with a leading "push" word
	key     string   // the table block: prog, or "git <subcommand>", "ffx log"
	argv    []string // normalized argv for display
	toks    []tok    // arguments after the program (and its global options)
	trusted bool     // program found on PATH or in a system directory
	floors  []limit  // why the command is at least Ask
	blocks  []limit  // why an allow rule may not allow it (it is Ask instead)
	nested  []nested // command lines its options or configuration run
	block   *programs.Block
	words   []shellparse.Word
	rest    []shellparse.Word // the words after the program and its global options
	joined  string            // the words joined for regex rules, once computed

	// The first two arguments that are not flags, for mayLead, once
	// found (firstKnown).
	firstKnown bool
	leads      []tok
	// gitAliases are the aliases git -c alias.X=V defines on the line.
	gitAliases map[string]string
	// gitImplied are the push options configuration on the line implies
	// (remote.origin.mirror=true is --mirror).
	gitImplied []shellparse.Word
	// gitDirs are the repositories and work trees git -C, --git-dir,
	// --work-tree and GIT_DIR name, judged against the scope (see
	// Policy.foreignDir).
	gitDirs []gitDir
	// assigns are the command's own environment assignments, vars those
	// the line made before it.
	assigns, vars []shellparse.Assign
}

// limit is a floor or a block: why, the table fact behind it (if any), and
// the flags an allow rule may name to accept it (an allow rule `sed -i`
// allows sed -i, a rule `sed` does not).
type limit struct {
	why   string
	fact  string
	flags []string
	// unreadable: a rule or the policy could not be read (fail closed).
	unreadable bool
	// network: the command reaches other machines (see network.go); key
	// is the table block whose fact says so, which an allow rule naming
	// it accepts.
	network bool
	key     string
	// layer says the run-time layer decides what the limit stands for
	// as it happens (see DecideUnderLayer): layerExec for what the
	// command runs that the static reading cannot see into (a program
	// by path or not known statically, a script or code, a program an
	// option names; each execution it makes is decided), layerWrite for
	// a file it writes (confined). 0 for the rest: what the layer does
	// not decide (network, reads, servers outside the tree, destruction
	// inside the scope, a rule that cannot be read) and what the static
	// reading did read (a command line in an option, decided as itself).
	layer layerKind
}

// layerKind is what the run-time layer does about a limit (limit.layer).
type layerKind uint8

const (
	layerNone  layerKind = iota
	layerExec            // what it runs is decided as it runs
	layerWrite           // what it writes is confined
)

// nested is a command line a command runs through an option, a
// configuration key or a variable: decided as a script of its own. A
// deny inside is a deny. With decide set, the line is what the option
// is for and is literal: the command is also at least what the line is
// (an ask, or no better than default when no rule matches it), and
// nothing else holds it back; without, a floor recorded beside it does.
type nested struct {
	script string
	via    string // the option or key, for the reason
	fact   string
	decide bool
	flags  []string // the flags an allow rule may name to accept it
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
	// known is set for an option the table says takes a value, with its
	// value read: an allow rule may look past it for a further
	// subcommand word (ffx log --filter x dump).
	known bool
	// resolved is a relative positional joined to the known working
	// directory (cd / && rm -rf * removes /*).
	resolved string
	word     shellparse.Word
}

// floor records why the command is at least Ask, whatever the rules say.
func (c *call) floor(format string, args ...any) {
	c.floors = append(c.floors, limit{why: fmt.Sprintf(format, args...)})
}

// floorRuns is floor for what the command runs that the static reading
// cannot see into, and the run-time layer decides as it runs (layerExec).
func (c *call) floorRuns(format string, args ...any) {
	c.floors = append(c.floors, limit{why: fmt.Sprintf(format, args...), layer: layerExec})
}

// blockRuns records why an allow rule may not allow the command (it is
// then Ask, while a command no rule matches stays Default), for what the
// run-time layer decides as it runs.
func (c *call) blockRuns(format string, args ...any) {
	c.blocks = append(c.blocks, limit{why: fmt.Sprintf(format, args...), layer: layerExec})
}

// newCall normalizes a command's words. It never fails: what it cannot read
// becomes a floor.
func newCall(tbl *programs.Table, words []shellparse.Word, dir string) *call {
	return newCallEnv(tbl, words, dir, nil, nil)
}

// newCallEnv is newCall for a command run with assignments before it:
// those that configure the program (GIT_CONFIG_*) are read as the
// configuration they are. vars are the assignments earlier commands of
// the line made (see shellparse.Command.Vars): values the program may
// find in its environment (git --config-env).
func newCallEnv(tbl *programs.Table, words []shellparse.Word, dir string, assigns, vars []shellparse.Assign) *call {
	c := &call{words: words, assigns: assigns, vars: vars}
	if len(words) == 0 {
		return c
	}
	prog := words[0]
	if !prog.Static {
		c.floorRuns("program is not known statically: %s", prog.Text)
		// $HOME/bin/rm is rm wherever $HOME is: with a literal last
		// element the name is known, so deny and ask rules still apply
		// (the floor keeps any allow rule from allowing it).
		if i := strings.LastIndexAny(prog.Text, `/\`); i >= 0 && wordLike(prog.Text[i+1:]) && !strings.ContainsAny(prog.Text[i+1:], "$`'\"\\") {
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
	if prog.Glob && strings.ContainsAny(prog.Text, "*?[") {
		// /usr/bin/r[m] runs whatever the pattern matches: rules about
		// the name as written still apply, an allow rule does not.
		c.floorRuns("program is a pattern the shell expands: %s", prog.Text)
	}
	progDir, written := path.Split(prog.Text)
	progDir = strings.TrimSuffix(progDir, "/")
	c.trusted = progDir == "" && !strings.Contains(written, `\`) || progDir != "" && systemDirs[path.Clean(progDir)]
	base := programs.Name(prog.Text)
	if !c.trusted {
		c.blockRuns("runs %s by path, not %s from PATH", prog.Text, base)
	} else if base != strings.ToLower(written) {
		c.blockRuns("runs %s, not %s", prog.Text, base)
	}
	rest := words[1:]
	c.prog = base
	if sub, ok := strings.CutPrefix(base, "git-"); ok && sub != "" {
		c.prog = "git"
		rest = append([]shellparse.Word{{Text: sub, Static: true}}, rest...)
	}
	c.argv = []string{c.prog}
	p := tbl.Program(c.prog)
	if p == nil {
		// python3.12, gawk5: the table knows the program without its
		// version.
		if trimmed := strings.TrimRight(c.prog, "0123456789.-"); trimmed != c.prog {
			p = tbl.Program(trimmed)
		}
	}
	if c.prog == "git" {
		c.gitEnv(p, assigns)
		rest = c.gitGlobals(p, rest)
	} else if p.HasGlobals() {
		for len(rest) > 0 && rest[0].Static {
			v, ok, _ := p.Global(rest[0].Text)
			if !ok {
				break
			}
			rest = rest[1:]
			if v && len(rest) > 0 {
				rest = rest[1:]
			}
		}
	}
	c.key = c.prog
	if p != nil {
		c.block = p.Deepest(len(rest), func(j int) (string, bool) { return rest[j].Text, rest[j].Static })
		c.key = c.block.Key
		if like := c.block.Like; like != nil && len(like.Args) > 1 && like.Args[0] == c.prog {
			// git send-pack is git push: its rules apply.
			n := strings.Count(c.block.Key, " ")
			if n <= len(rest) {
				subs := make([]shellparse.Word, 0, len(like.Args)-1+len(rest)-n)
				for _, w := range like.Args[1:] {
					subs = append(subs, shellparse.Word{Text: w, Static: true})
				}
				rest = append(subs, rest[n:]...)
				c.block = p.Deepest(len(rest), func(j int) (string, bool) { return rest[j].Text, rest[j].Static })
				c.key = c.block.Key
			}
		}
	}
	if c.prog == "git" && len(rest) > 0 && rest[0].Static && c.key == "git" {
		c.key = "git " + rest[0].Text
	}
	c.rest = rest
	if c.gitImplied != nil && c.key == "git push" {
		// remote.<name>.mirror=true or a + refspec from configuration:
		// the push is a mirror or forced push.
		rest = append(append([]shellparse.Word(nil), rest...), c.gitImplied...)
	}
	c.toks = c.tokens(rest, dir)
	for _, w := range rest {
		c.argv = append(c.argv, w.Text)
	}
	c.programFloors()
	c.networkFloors()
	if c.prog == "git" && len(rest) > 0 && rest[0].Static && c.gitAliases != nil {
		c.gitAlias(rest)
	}
	return c
}

// gitGlobals skips git's options before the subcommand, flooring the ones
// that make git run something else.
func (c *call) gitGlobals(p *programs.Program, args []shellparse.Word) []shellparse.Word {
	for len(args) > 0 {
		a := args[0]
		if !a.Static {
			if strings.HasPrefix(a.Text, "-") || a.Split || canBeFlag(a) {
				c.floorRuns("git option is not known statically: %s", a.Text)
			}
			return args
		}
		name, val, hasVal := strings.Cut(a.Text, "=")
		takes, ok, _ := p.Global(a.Text)
		switch {
		case ok && (takes || hasVal) && name != "--exec-path":
			static := true
			if !hasVal {
				if len(args) < 2 {
					return args[1:]
				}
				val, static = args[1].Text, args[1].Static
				if !static {
					c.floorRuns("git %s value is not known statically: %s", name, val)
				}
				args = args[1:]
			}
			switch name {
			case "-c":
				c.gitConfig(p, val, static)
			case "--config-env":
				c.floorRuns("git --config-env sets configuration from the environment")
				c.gitConfigEnv(p, val, static)
			case "-C", "--git-dir", "--work-tree":
				c.gitRepo(name, val, static)
			}
			args = args[1:]
		case name == "--exec-path" && hasVal:
			c.floorRuns("git --exec-path changes where git finds its commands")
			args = args[1:]
		case ok:
			args = args[1:]
		default:
			if strings.HasPrefix(a.Text, "-") && len(a.Text) > 1 && !isHelpOrVersion(a.Text) {
				// A global option git does not have: it will refuse
				// to run, but do not guess which word is the subcommand.
				c.floorRuns("unknown git option %s", a.Text)
			}
			return args
		}
	}
	return args
}

// gitRepo floors a git option or variable that names another repository
// or work tree: its configuration (pagers, hooks, fsmonitor) runs. A path
// that stays in the working directory is the checkout's own (a jiri
// project); the gate judges the rest against the scope.
func (c *call) gitRepo(name, val string, static bool) {
	if !static {
		c.floorRuns("git %s %s: another repository's configuration and hooks may run", name, val)
		return
	}
	c.gitDirs = append(c.gitDirs, gitDir{name, val})
}

// gitDir is a directory a git option or variable names (git -C DIR).
type gitDir struct{ how, dir string }

// gitEnv reads the variables that configure git: GIT_CONFIG_PARAMETERS
// and GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n are git -c
// in the environment; GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR name
// another repository; GIT_EXEC_PATH and GIT_CONFIG_GLOBAL/SYSTEM/GIT_CONFIG
// choose what git runs and reads.
func (c *call) gitEnv(p *programs.Program, assigns []shellparse.Assign) {
	if len(assigns) == 0 {
		return
	}
	keys, values := map[string]shellparse.Word{}, map[string]shellparse.Word{}
	for _, a := range assigns {
		v := a.Value
		switch {
		case a.Name == "GIT_CONFIG_PARAMETERS":
			kvs, ok := gitConfigParameters(v)
			if !ok {
				c.floorRuns("GIT_CONFIG_PARAMETERS is not known statically: %s", v.Text)
				continue
			}
			for _, kv := range kvs {
				c.gitConfig(p, kv, true)
			}
		case strings.HasPrefix(a.Name, "GIT_CONFIG_KEY_"):
			keys[strings.TrimPrefix(a.Name, "GIT_CONFIG_KEY_")] = v
		case strings.HasPrefix(a.Name, "GIT_CONFIG_VALUE_"):
			values[strings.TrimPrefix(a.Name, "GIT_CONFIG_VALUE_")] = v
		case a.Name == "GIT_DIR" || a.Name == "GIT_WORK_TREE" || a.Name == "GIT_COMMON_DIR":
			c.gitRepo(a.Name+"=", v.Text, v.Static)
		case a.Name == "GIT_EXEC_PATH":
			c.floorRuns("GIT_EXEC_PATH changes where git finds its commands")
		case a.Name == "GIT_CONFIG_GLOBAL" || a.Name == "GIT_CONFIG_SYSTEM" || a.Name == "GIT_CONFIG":
			if !v.Static || v.Text != "/dev/null" {
				c.floorRuns("%s makes git read configuration from %s", a.Name, v.Text)
			}
		}
	}
	for n, k := range keys {
		v := values[n]
		if !k.Static {
			c.floorRuns("GIT_CONFIG_KEY_%s is not known statically: %s", n, k.Text)
			continue
		}
		if _, ok := values[n]; !ok {
			v = shellparse.Word{Static: true}
		}
		c.gitConfig(p, k.Text+"="+v.Text, v.Static)
	}
}

// gitConfigEnv reads git --config-env KEY=NAME with the values the line
// gives NAME (in front of git, or earlier on the line): each is decided
// as git -c KEY=VALUE would be, so that an alias or a pager it sets shows
// (a deny inside is a deny). The floor stays: the environment may hold
// another value.
func (c *call) gitConfigEnv(p *programs.Program, val string, static bool) {
	key, name, ok := strings.Cut(val, "=")
	if !static || !ok || key == "" || name == "" {
		return
	}
	for _, list := range [][]shellparse.Assign{c.assigns, c.vars} {
		for _, a := range list {
			if a.Name == name && a.Value.Static {
				c.gitConfig(p, key+"="+a.Value.Text, true)
			}
		}
	}
}

// gitConfigParameters splits GIT_CONFIG_PARAMETERS as git does: each
// entry single-quoted ('key=value', or 'key'='value'), separated by
// spaces.
func gitConfigParameters(v shellparse.Word) ([]string, bool) {
	if !v.Static {
		return nil, false
	}
	var out []string
	s := strings.TrimSpace(v.Text)
	for s != "" {
		var entry strings.Builder
		for s != "" && s[0] != ' ' {
			switch {
			case s[0] == '\'':
				end := strings.IndexByte(s[1:], '\'')
				if end < 0 {
					return nil, false
				}
				entry.WriteString(s[1 : 1+end])
				s = s[2+end:]
			case s[0] == '\\' && len(s) > 1:
				entry.WriteByte(s[1])
				s = s[2:]
			default:
				entry.WriteByte(s[0])
				s = s[1:]
			}
		}
		out = append(out, entry.String())
		s = strings.TrimLeft(s, " ")
	}
	return out, true
}

// gitConfig floors git -c KEY=VALUE unless the key is safe, and decides a
// value git runs as a command line.
func (c *call) gitConfig(p *programs.Program, kv string, static bool) {
	key, value, _ := strings.Cut(kv, "=")
	lk := strings.ToLower(key)
	if strings.HasPrefix(lk, "remote.") && static {
		switch {
		case strings.HasSuffix(lk, ".mirror") && gitTrue(value):
			c.gitImplied = append(c.gitImplied, shellparse.Word{Text: "--mirror", Static: true})
		case strings.HasSuffix(lk, ".push") && strings.HasPrefix(value, "+"):
			c.gitImplied = append(c.gitImplied, shellparse.Word{Text: "--force", Static: true})
		}
	}
	exec, safe, f := p.ConfigKey(key)
	if safe && static {
		return
	}
	if exec && static && f.Builtin {
		// A command line written out: decided as what it is (git -c
		// core.pager=cat log runs cat). Only the built-in table says
		// so: a manifest's fact only makes decisions stricter.
		c.nested = append(c.nested, nested{script: gitConfigCommand(lk, value), via: "git -c " + key, fact: f.String(), decide: true})
		return
	}
	c.floorRuns("git -c %s can make git run a command", key)
	if !static {
		return
	}
	if exec {
		c.nested = append(c.nested, nested{script: value, via: "git -c " + key, fact: f.String()})
	}
	if name, ok := strings.CutPrefix(lk, "alias."); ok && name != "" {
		if c.gitAliases == nil {
			c.gitAliases = map[string]string{}
		}
		c.gitAliases[name] = value
	}
}

// gitConfigCommand returns the command line git runs for a key whose
// value is one: a credential helper is `git credential-VALUE` unless it
// starts with ! (a shell command line) or is a path; a submodule's update
// method runs a command only as !CMD.
func gitConfigCommand(key, value string) string {
	if strings.HasPrefix(key, "submodule.") && strings.HasSuffix(key, ".update") {
		if cmd, ok := strings.CutPrefix(value, "!"); ok {
			return cmd
		}
		return ""
	}
	if key == "credential.helper" || strings.HasPrefix(key, "credential.") && strings.HasSuffix(key, ".helper") {
		switch {
		case strings.HasPrefix(value, "!"):
			return value[1:]
		case strings.HasPrefix(value, "/") || strings.HasPrefix(value, "~"):
			return value
		case strings.TrimSpace(value) == "":
			return ""
		}
		return "git credential-" + value
	}
	return value
}

// gitTrue reports a git boolean that is true (a key with no = is true).
func gitTrue(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true
	}
	return false
}

// gitAlias decides the command an alias defined on the line stands for:
// git -c alias.p='push --force' p is git push --force; an alias starting
// with ! is a shell command line.
func (c *call) gitAlias(rest []shellparse.Word) {
	v, ok := c.gitAliases[strings.ToLower(rest[0].Text)]
	if !ok {
		return
	}
	if sh, ok := strings.CutPrefix(v, "!"); ok {
		c.nested = append(c.nested, nested{script: sh, via: "git alias " + rest[0].Text})
		return
	}
	line := "git " + v
	for _, w := range rest[1:] {
		if w.Static {
			// The line is parsed again: quote as the shell reads it.
			q, err := syntax.Quote(w.Text, syntax.LangBash)
			if err != nil {
				q = quote(w.Text) // a NUL byte: still one word, never less
			}
			line += " " + q
		} else {
			line += " " + w.Text
		}
	}
	c.nested = append(c.nested, nested{script: line, via: "git alias " + rest[0].Text})
}

// serviceReads are the actions of service and systemctl that only show
// what runs.
var serviceReads = map[string]bool{
	"status": true, "--status-all": true, "show": true, "cat": true, "help": true, "--help": true, "-h": true,
	"--version": true, "is-active": true, "is-enabled": true, "is-failed": true, "is-system-running": true,
	"list-units": true, "list-unit-files": true, "list-sockets": true, "list-timers": true, "list-jobs": true,
	"list-dependencies": true, "list-machines": true, "show-environment": true, "get-default": true,
}

// serviceChange returns the action of a service or systemctl command that
// starts, stops or changes a service ("" for one that only shows): the
// action is systemctl's first operand, service's second (service NAME
// ACTION). An action not known statically changes one.
func serviceChange(c *call) string {
	n := 1
	if c.prog == "service" {
		n = 2
	}
	for _, t := range c.toks {
		switch {
		case t.kind == wildTok:
			return t.word.Text
		case t.kind == flagTok && c.prog == "service" && t.long == "status-all":
			return ""
		case t.kind != posTok:
			continue
		}
		if n--; n == 0 {
			if serviceReads[t.text] {
				return ""
			}
			return t.text
		}
	}
	if c.prog == "systemctl" {
		return "" // systemctl alone lists the units
	}
	return ""
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

// tokens splits arguments into positionals, flags and unknown words with
// what the table knows of the command's block. dir, when known, resolves
// relative positionals. It also applies the options' effects: floors,
// blocks and nested command lines.
func (c *call) tokens(args []shellparse.Word, dir string) []tok {
	var argBuf [8]programs.Arg
	var tokBuf [8]programs.Token
	pargs := argBuf[:0]
	for _, a := range args {
		pargs = append(pargs, programs.Arg{Text: a.Text, Static: a.Static})
	}
	split := c.block.AppendSplit(tokBuf[:0], pargs)
	out := make([]tok, 0, len(split))
	effects := false // the block has options that run or write
	for b := c.block; b != nil && !effects; {
		for _, f := range b.Facts() {
			switch f.Kind {
			case programs.Exec, programs.Runs, programs.Write, programs.Output, programs.Writes, programs.Inline, programs.Code:
				effects = true
			}
		}
		if b.Program().Root == b {
			break
		}
		b = b.Program().Root
	}
	for _, st := range split {
		a := args[st.Arg]
		switch st.Kind {
		case programs.EndOfOptions:
		case programs.Unknown:
			if c.key == "git push" && !st.AfterEnd && strings.HasPrefix(strings.TrimLeft(a.Text, `"'`), "+") {
				// "+$(git branch --show-current)" is a forced update
				// whatever the branch.
				out = append(out, tok{kind: flagTok, flags: []string{"force"}})
			}
			t := tok{kind: wildTok, flag: !st.AfterEnd && canBeFlag(a), word: a}
			if t.flag && effects && c.block != nil {
				c.blockRuns("an argument not known statically could be an option of %s that runs or writes: %s", c.key, a.Text)
				effects = false // say it once
			}
			out = append(out, t)
		case programs.Operand:
			t := a.Text
			if c.key == "git push" && strings.HasPrefix(t, "+") && len(t) > 1 && !st.AfterEnd {
				// git push +ref is a forced update of ref.
				out = append(out, tok{kind: flagTok, flags: []string{"force"}})
				out = append(out, tok{kind: posTok, text: t[1:], word: a})
				continue
			}
			if !st.AfterEnd {
				c.operandEffects(t)
			}
			pt := tok{kind: posTok, text: t, word: a}
			if dir != "" && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") {
				pt.resolved = path.Join(dir, t)
			}
			out = append(out, pt)
		case programs.Option:
			ft := tok{kind: flagTok, flags: []string{st.Name}, word: a}
			o := st.Opt
			if o != nil && len(o.Canon) > 0 {
				ft.flags = o.Canon
			}
			if st.Long {
				ft.long = st.Name
				if (o == nil || len(o.Canon) == 0) && len(st.Name) >= 1 {
					ft.abbrev = st.Name
				}
			}
			ft.known = o != nil && trusted(o) && st.HasValue && !st.Peeked && (st.ValueArg < 0 || o.Consumes)
			out = append(out, ft)
			if o != nil {
				c.optionEffects(st, o, ft.flags)
			}
		}
	}
	return out
}

func trusted(o *programs.Opt) bool { return o.Builtin }

// spell is an option as written, for reasons.
func spell(st programs.Token) string {
	if st.Long {
		return "--" + st.Name
	}
	return "-" + st.Name
}

// optionEffects applies what the table says an option makes the program do.
func (c *call) optionEffects(st programs.Token, o *programs.Opt, flags []string) {
	name := spell(st)
	if c.block != nil && c.block.Program().SingleDash != nil {
		name = "-" + st.Name
	}
	for _, e := range o.Effects {
		if !e.Applies(st.Value, st.ValueStatic) {
			continue
		}
		fact := e.Fact.String()
		lim := limit{fact: fact, flags: flags}
		if e.Fact.Builtin {
			// What the built-in table says an option runs or writes,
			// the run-time layer decides as it happens; a manifest's
			// fact stays a limit whatever runs.
			lim.layer = layerExec
		}
		switch e.Kind {
		case programs.Exec:
			switch {
			case !st.HasValue:
				lim.why = fmt.Sprintf("%s runs a command line it reads from configuration (%s)", c.prog, name)
			case !st.ValueStatic:
				lim.why = fmt.Sprintf("%s %s runs a command line not known statically: %s", c.prog, name, st.Value)
			default:
				// The command line is written out: decided as what
				// it is (man -P cat runs cat), when the built-in
				// table says so; a manifest's fact only adds a floor.
				lim.why = fmt.Sprintf("%s %s runs a command line", c.prog, name)
				script := strings.TrimLeft(e.Rest(st.Value), "= \t")
				if inner, ok := quotedValue(script); ok {
					// A configuration value: "CMD" or ["prog", "arg"].
					script = inner
				}
				c.nested = append(c.nested, nested{script: script, via: name, fact: fact, decide: e.Fact.Builtin, flags: flags})
				if e.Fact.Builtin {
					continue
				}
			}
			c.floors = append(c.floors, lim)
		case programs.Code:
			lim.why = fmt.Sprintf("%s %s runs code that can run commands", c.prog, name)
			c.floors = append(c.floors, lim)
		case programs.Ex:
			if !st.HasValue || !st.ValueStatic {
				lim.why = fmt.Sprintf("%s %s runs Ex commands not known statically", c.prog, name)
				c.floors = append(c.floors, lim)
				continue
			}
			c.exEffects(st.Value, name, fact, flags)
		case programs.Runs:
			lim.why = fmt.Sprintf("%s %s runs a program it names", c.prog, name)
			c.floors = append(c.floors, lim)
		case programs.Ask:
			lim.why = fmt.Sprintf("%s %s runs a program from configuration", c.prog, name)
			c.floors = append(c.floors, lim)
		case programs.Write:
			if st.HasValue && st.ValueStatic && e.Fact.Builtin {
				// Package shellparse made the file a write
				// redirection of the command: decided as `>` is.
				continue
			}
			lim.why = fmt.Sprintf("%s %s writes a file", c.prog, name)
			if lim.layer != layerNone {
				lim.layer = layerWrite
			}
			c.floors = append(c.floors, lim)
		case programs.Output:
			if st.HasValue && st.ValueStatic && (inTree(st.Value) || e.Fact.Builtin) {
				continue
			}
			lim.why = fmt.Sprintf("%s %s writes a file outside the working directory", c.prog, name)
			if st.HasValue {
				lim.why += ": " + st.Value
			}
			if lim.layer != layerNone {
				lim.layer = layerWrite
			}
			c.blocks = append(c.blocks, lim)
		case programs.Writes:
			lim.why = fmt.Sprintf("%s %s writes or removes files", c.prog, name)
			switch e.Mode {
			case "system":
				lim.why = fmt.Sprintf("%s %s changes the system", c.prog, name)
			case "discard":
				// Inside the scope, where the layer lets it write.
				lim.why = fmt.Sprintf("%s %s throws away uncommitted work", c.key, name)
				lim.layer = layerNone
				c.floors = append(c.floors, lim)
				continue
			}
			if lim.layer != layerNone {
				lim.layer = layerWrite
			}
			c.blocks = append(c.blocks, lim)
		case programs.Inline:
			lim.why = fmt.Sprintf("%s runs inline code (%s)", c.prog, name)
			c.blocks = append(c.blocks, lim)
		case programs.Downloads:
			// Network: the layer does not decide it.
			lim.why = fmt.Sprintf("%s %s fetches a package from its registry and runs it", c.prog, name)
			lim.layer = layerNone
			c.floors = append(c.floors, lim)
		case programs.Network:
			lim.why, lim.network, lim.key, lim.layer = fmt.Sprintf("%s %s reaches other machines", c.prog, name), true, e.Fact.Key, layerNone
			c.floors = append(c.floors, lim)
		}
	}
}

// operandEffects applies the table's facts about operands: less +!cmd, dd
// of=FILE, make SHELL=prog and make's expanded values.
func (c *call) operandEffects(w string) {
	if c.block == nil {
		return
	}
	if c.prog == "git" {
		if cmdline, ok := strings.CutPrefix(w, "ext::"); ok {
			// git's ext transport runs the URL as a command line
			// (% is its escape: "% " a space, "%%" a %).
			cmdline = extCommand(cmdline)
			c.floorRuns("git runs the command line of the URL %s", w)
			c.nested = append(c.nested, nested{script: cmdline, via: "ext::"})
		}
	}
	if strings.HasPrefix(w, "+") {
		for _, e := range c.block.Plus() {
			if e.Kind == programs.Ex {
				c.exEffects(w[1:], "+", e.Fact.String(), nil)
				continue
			}
			if i := strings.IndexByte(w, e.Plus); i >= 0 {
				script := w[i+1:]
				if e.Plus == '|' && script != "" {
					script = script[1:] // |m: the mark letter
				}
				if !e.Fact.Builtin {
					c.floors = append(c.floors, limit{why: fmt.Sprintf("%s %c runs a command line", c.prog, e.Plus), fact: e.Fact.String()})
				}
				c.nested = append(c.nested, nested{script: script, via: string(w[:i+1]), fact: e.Fact.String(), decide: e.Fact.Builtin})
			}
		}
	}
	if effects, v := c.block.Shape(w); effects != nil {
		for _, e := range effects {
			if e.Kind == programs.Exec {
				c.nested = append(c.nested, nested{script: v, via: w[:strings.IndexByte(w, '=')+1], fact: e.Fact.String(), decide: e.Fact.Builtin})
				if e.Fact.Builtin {
					continue
				}
			}
			lim := limit{why: fmt.Sprintf("%s %s", c.prog, describe(e.Kind)), fact: e.Fact.String()}
			if e.Fact.Builtin {
				lim.layer = layerOf(e.Kind)
			}
			c.floors = append(c.floors, lim)
		}
	}
	name, value, ok := strings.Cut(w, "=")
	if !ok {
		return
	}
	if f := c.block.Expands(); f != nil {
		// make reads 'X != cmd' as it reads X!=cmd: blanks around
		// the name and the operator do not matter.
		name, value = strings.TrimRight(name, " \t"), strings.TrimLeft(value, " \t")
		// make's other assignments: NAME:=, ::=, :::=, ?=, +=, and !=,
		// which runs its value when make starts.
		trimmed := strings.TrimRight(name, ":?+!")
		op := name[len(trimmed):]
		trimmed = strings.TrimRight(trimmed, " \t")
		if validVar(trimmed) {
			if op == "!" {
				c.floors = append(c.floors, limit{why: fmt.Sprintf("%s %s!= runs a command line", c.prog, trimmed), fact: f.String(), layer: builtinExec(f)})
				c.nested = append(c.nested, nested{script: value, via: trimmed + " !=", fact: f.String()})
			}
			name = trimmed
		}
	}
	if !validVar(name) {
		return
	}
	if f := c.block.AssignRuns(name); f != nil {
		c.floors = append(c.floors, limit{why: fmt.Sprintf("%s %s= runs a program it names", c.prog, name), fact: f.String(), layer: builtinExec(f)})
		// The value starts the command lines that run it: make
		// RM='rm -rf /' clean runs rm -rf / FILES.
		c.nested = append(c.nested, nested{script: value, via: name + "=", fact: f.String()})
	}
	if f := c.block.Expands(); f != nil && strings.ContainsAny(value, "$`") {
		c.floors = append(c.floors, limit{why: fmt.Sprintf("%s expands %s=, which can run a command", c.prog, name), fact: f.String(), layer: builtinExec(f)})
		for _, open := range []string{"$(shell ", "${shell "} {
			for rest := value; ; {
				i := strings.Index(rest, open)
				if i < 0 {
					break
				}
				script, after := makeCall(rest[i+len(open):], open[1])
				c.nested = append(c.nested, nested{script: script, via: name + "=", fact: f.String()})
				rest = after
			}
		}
	}
}

// extCommand returns the command an ext:: URL runs as a shell line: its
// words are split at spaces, and "% " in a word is a space ("%%" a %).
func extCommand(s string) string {
	var words []string
	var w strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '%'):
			w.WriteByte(s[i+1])
			i++
		case s[i] == ' ':
			if w.Len() > 0 {
				words = append(words, w.String())
				w.Reset()
			}
		default:
			w.WriteByte(s[i])
		}
	}
	if w.Len() > 0 {
		words = append(words, w.String())
	}
	for i, x := range words {
		if q, err := syntax.Quote(x, syntax.LangBash); err == nil {
			words[i] = q
		} else {
			words[i] = quote(x)
		}
	}
	return strings.Join(words, " ")
}

// quotedValue returns the command line a configuration value holds when
// the value is quoted as TOML or JSON spell it: "CMD" or 'CMD' is CMD,
// ["prog", "arg"] is prog arg.
func quotedValue(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return "", false
	}
	switch {
	case (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]:
		return s[1 : len(s)-1], true
	case s[0] == '[' && s[len(s)-1] == ']':
		return strings.ReplaceAll(s[1:len(s)-1], ",", " "), true
	}
	return "", false
}

// layerOf is what the run-time layer does about an effect of kind k of
// the built-in table: a write is confined, the rest runs something,
// decided as it runs.
func layerOf(k programs.Kind) layerKind {
	switch k {
	case programs.Write, programs.Output, programs.Writes:
		return layerWrite
	case programs.Downloads:
		return layerNone
	}
	return layerExec
}

// builtinExec is layerExec for a fact of the built-in table, and none for
// a manifest's: a checkout's own fact stays a limit whatever runs.
func builtinExec(f *programs.Fact) layerKind {
	if f != nil && f.Builtin {
		return layerExec
	}
	return layerNone
}

func describe(k programs.Kind) string {
	switch k {
	case programs.Exec:
		return "runs a command line"
	case programs.Runs:
		return "runs a program it names"
	}
	return "writes a file"
}

func validVar(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
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

// programFloors applies what is known about particular programs beyond
// their options: scripts in their operands, configuration they write.
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
		git := programs.Builtin().Program("git")
		if c.block != nil {
			git = c.block.Program()
		}
		for _, t := range c.toks[min(1, len(c.toks)):] {
			if _, safe, _ := git.ConfigKey(t.text); t.kind == posTok && strings.Contains(t.text, ".") && !safe && !read {
				c.floorRuns("git config %s can make git run a command", t.text)
				break
			}
			if t.kind == wildTok && !read {
				c.floorRuns("git config key is not known statically")
				break
			}
		}
	case "git checkout", "git restore":
		// A pathspec of the whole tree throws away every uncommitted
		// change, as reset --hard does (git restore --staged alone only
		// unstages).
		staged, worktree := false, c.key == "git checkout"
		for _, t := range c.toks {
			if t.kind == flagTok {
				for _, f := range t.flags {
					staged = staged || f == "S" || f == "staged"
					worktree = worktree || f == "W" || f == "worktree"
				}
			}
		}
		for _, t := range c.toks {
			if t.kind == posTok && wholeTree(t.text) && (worktree || !staged) {
				c.floor("%s %s throws away every uncommitted change", c.key, t.text)
				break
			}
		}
	case "crontab":
		// crontab FILE (or its standard input) installs commands that
		// run later, outside any check; -l only lists.
		list := false
		for _, t := range c.toks {
			list = list || t.kind == flagTok && slices.Contains(t.flags, "l")
		}
		if !list {
			c.floor("crontab installs commands that run later")
		}
	case "npx":
		// npx pkg@1.2 (or @latest) runs that version of the package,
		// fetched from the registry whatever the project holds.
		for _, t := range c.toks {
			if t.kind == posTok {
				if at := strings.LastIndexByte(t.text, '@'); at > 0 {
					c.floor("npx fetches %s from its registry and runs it", t.text)
				}
				break
			}
		}
	case "service", "systemctl":
		if what := serviceChange(c); what != "" {
			c.floor("%s %s changes the machine's services", c.prog, what)
		}
	case "xdotool", "ydotool", "wtype", "dotool", "xte":
		// Keys typed into the person's windows are run by whatever has
		// the focus, outside any check.
		c.floor("%s sends input to the person's windows, which run it outside any check", c.prog)
	case "kitty", "kitten", "wezterm":
		// A terminal's remote control (kitty @ send-text, wezterm cli
		// send-text, … spawn) and its single instance (wezterm start,
		// kitty --single-instance) type or start commands in the
		// person's running terminal, through its own socket.
		if !c.helpOnly() {
			c.floor("%s may hand commands to the person's running terminal, which runs them outside any check", c.prog)
		}
	case "alias":
		for _, t := range c.toks {
			if strings.Contains(t.word.Text, "=") {
				c.floorRuns("defines an alias, changing what later words run")
				break
			}
		}
	}
	if c.block == nil {
		return
	}
	if f := c.block.DownloadsFact(); f != nil {
		c.floors = append(c.floors, limit{why: fmt.Sprintf("%s fetches a package from its registry and runs it", c.key), fact: f.String()})
	}
	if f := c.block.ScriptFact(); f != nil {
		nf, nb := len(c.floors), len(c.blocks)
		switch f.Arg {
		case "sed":
			c.sedFloors()
		case "awk":
			c.awkFloors()
		}
		for i := nf; i < len(c.floors); i++ {
			c.floors[i].fact = f.String()
		}
		for i := nb; i < len(c.blocks); i++ {
			c.blocks[i].fact = f.String()
		}
	}
}

// wholeTree reports a pathspec that names the whole work tree.
func wholeTree(p string) bool {
	for _, s := range []string{p, strings.TrimSuffix(p, "/")} {
		switch s {
		case ".", ":/", ":(top)", "*", ":/*", ":(top)*", ":/.":
			return true
		}
	}
	return false
}

// makeCall returns the text of a make function call up to its closing
// bracket (nested brackets balanced), and what follows it.
func makeCall(s string, open byte) (string, string) {
	closer := byte(')')
	if open == '{' {
		closer = '}'
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closer:
			if depth == 0 {
				return s[:i], s[i+1:]
			}
			depth--
		}
	}
	return s, ""
}

// writeFact returns the table fact behind a write redirection package
// shellparse made of what the program writes (an option's file: -o, or
// its operands: op is then the program), "" for one the line wrote.
func (c *call) writeFact(op string) string {
	if c.block == nil || op == "" || op[0] >= '0' && op[0] <= '9' || strings.ContainsAny(op[:1], "<>&") {
		return ""
	}
	if name, ok := strings.CutPrefix(op, "-"); ok {
		var o *programs.Opt
		if long, ok := strings.CutPrefix(name, "-"); ok || c.block.Program().SingleDash != nil {
			o = c.block.Long(strings.TrimPrefix(long, "-"))
			if !ok {
				o = c.block.Long(name)
			}
		} else if len(name) == 1 {
			o = c.block.Short(name[0])
		}
		if o != nil {
			for _, e := range o.Effects {
				if e.Kind == programs.Write || e.Kind == programs.Output || e.Kind == programs.Writes {
					return e.Fact.String()
				}
			}
		}
		return ""
	}
	if f := c.block.TargetsFact(); f != nil {
		return f.String()
	}
	for b := c.block; b != nil; {
		for _, f := range b.Facts() {
			if f.Kind == programs.Writes {
				return f.String()
			}
		}
		if b == b.Program().Root {
			break
		}
		b = b.Program().Root
	}
	return ""
}
