// Package programs holds what agent-shim knows about particular programs:
// which of their options take a value, which spellings mean the same flag,
// which options run a command line or a program, which write files, which
// words start a subcommand, and which programs run inline code.
//
// The knowledge is data: one reviewed text file, programs.txt, embedded in
// the binary and parsed the first time it is needed (never at start-up), one
// block per program so that a change to one program reads as one diff.
// Manifests may add facts for their own tools in the same format (Parse and
// Merge); such facts can only make decisions stricter.
//
// # Format
//
// Blank lines and lines starting with # are ignored. A line `[prog]` or
// `[prog sub ...]` starts the block of a program or of one of its
// subcommands; the facts of a program's block also hold for its
// subcommands. Each further line is one fact, `KIND ARG...`:
//
//	alias CANON OPT...     the options are one flag named CANON (rm -r -R --recursive)
//	value OPT...           the option takes a value (attached, or the next word)
//	optional OPT...        the option takes a value only when attached (sed -i.bak)
//	exec OPT...            the value is a shell command line (git ls-remote --upload-pack)
//	runs OPT...            the value is a program it runs (npm --script-shell)
//	ask OPT...             the option runs a configured program (git diff --ext-diff)
//	write OPT...           the value is a file it writes (sort -o)
//	output OPT...          the value is a file it writes; a relative path that stays
//	                       in the working directory is ordinary (go build -o bin/x)
//	writes MODE OPT...     the option makes it write; MODE says what: operands (its
//	                       file operands), archive (the value of its option
//	                       aliased file: tar -c -f FILE), into (the directory its
//	                       option aliased directory names, tar -x -C DIR; without
//	                       one, the working directory: what is written there is
//	                       not known), unknown, or system (no file: date -s)
//	targets MODE           the operands it always writes: all, last, first, after-first
//	inline OPT...          the option's value is inline code (python -c)
//	script LANG            its first operand is a LANG program (sed, awk), read by the matcher
//	single-dash            long options take one dash (find -name, go test -run)
//	bundled                a first word without a dash is an option cluster (tar xf)
//	global-value OPT...    an option before the subcommand that takes a value (git -C)
//	global-flag OPT...     an option before the subcommand that takes none (git --no-pager)
//	env-exec NAME...       the environment variable's value is a command line (LESSOPEN);
//	                       NAME may hold * for any run of characters (CARGO_TARGET_*_RUNNER)
//	env-runs NAME...       the environment variable changes what the program runs or
//	                       loads (GOFLAGS, PYTHONPATH); NAME ending in * is a prefix
//	env-args NAME...       the environment variable holds options the program reads as
//	                       its own (TAR_OPTIONS, MANOPT): PROG VALUE is read as a
//	                       command line, and a deny there is a deny
//	assign-runs NAME...    a NAME=VALUE operand whose value is a program (make SHELL=)
//	assign-expands         NAME=VALUE operands are expanded by the program: $( runs code (make);
//	                       make's other assignments (NAME:=, ::=, ?=, +=) are the same,
//	                       and NAME!=VALUE runs VALUE as a command line when make starts
//	config-exec KEY...     a configuration key (git -c KEY=) whose value is a command line;
//	                       KEY may end in * (pager.*) or hold * for one part (diff.*.command)
//	config-safe KEY...     a configuration key that never makes the program run anything
//	help                   a rule `prog help` also allows `prog --help` and `prog X --help`
//	code OPT...            the value is code in a language agent-shim does not read,
//	                       which can run commands (expect -c, gdb -ex): at least ask
//	like PROG SUB...       the subcommand does what the other one does, and its rules
//	                       apply (git send-pack is git push): built in only
//	reads GLOB...          it runs code from the files of the working directory so
//	                       named (make: Makefile, *.mk): one the same line wrote
//	                       makes it at least ask
//	ex OPT...              the value is Ex commands (vi, vim: -c, --cmd; + for operands
//	                       +CMD): a shell escape in them (!CMD, r !CMD, w !CMD) is
//	                       decided as its command, a command that may run anything
//	                       else (call, lua, source, normal…) is at least ask
//	downloads [OPT...]     it fetches a package from a registry and runs it (pnpm dlx,
//	                       bunx; npx --yes): at least ask, always or with the option
//	network [OPT...]       it reaches other machines (an API, a registry, a download):
//	                       at least ask, where the level does not let the agent
//	                       reach them (see matcher.Policy.SetNetwork); always, or
//	                       with the option. A command that only asks for its help or
//	                       version (--help, -h, --version, -V, help, version) does not
//	hosts MODE             (with network) the machines it reaches are the ones its
//	                       operands name: every operand (url: curl, wget) or those
//	                       spelled as URLs and [user@]host:path (remote: git clone,
//	                       scp, rsync). When each is this machine (localhost,
//	                       127.0.0.0/8, ::1) and no proxy variable is set, it
//	                       reaches none: a built-in fact only
//	runner                 it runs commands its operands give in ways no other fact
//	                       spells (npx, npm exec): its words are read as commands,
//	                       as a program outside the table's are, and a deny there
//	                       is a deny
//
// A program outside the table, or a subcommand whose block the table does
// not have (pnpm exec, where only [pnpm dlx] is listed), is read by
// package matcher for the commands its arguments may run: see its
// package documentation.
//
// writes discard OPT... says the option throws uncommitted work away (git
// checkout -f): at least ask, whatever allows the command.
//
// OPT is spelled as on a command line: -x, --long, or -name for single-dash
// programs. OPT@PREFIX limits a fact to values starting with PREFIX (ASCII
// case ignored; a PREFIX starting with * means "containing"):
// --checkpoint-action@exec= runs what follows exec=. +! and +| (less) are
// words starting with + that hold a ! or | command. A spelling ending in =
// without a dash (of=) is an operand of that shape (dd of=FILE).
package programs

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:embed programs.txt
var builtinText string

// Builtin returns the embedded table, parsed on first use.
//
// Only the blocks of the programs a decision looks up are parsed (a hook
// process decides one line); asking for every fact parses the rest.
var Builtin = sync.OnceValue(func() *Table {
	return &Table{lz: newLazy("programs.txt", builtinText)}
})

// lazy is a built-in table parsed block by block: a program's own block
// when the program is first looked up, a subcommand's when it is. A block
// is found by searching the text for its header, which the embedded file
// spells exactly as its key ("[git push]", TestBuiltinHeaders): nothing
// is indexed before the first lookup, which a hook process pays for.
type lazy struct {
	mu    sync.Mutex
	name  string
	text  string
	progs map[string]*Program
	full  *Table
}

// span is a block's text: its bytes [start, end) and first line's number.
type span struct{ start, end, line int }

func newLazy(name string, text string) *lazy {
	return &lazy{name: name, text: text, progs: map[string]*Program{}}
}

// header returns where the line that starts with prefix starts, or -1.
func (lz *lazy) header(prefix string) int {
	if strings.HasPrefix(lz.text, prefix) {
		return 0
	}
	if at := strings.Index(lz.text, "\n"+prefix); at >= 0 {
		return at + 1
	}
	return -1
}

// block finds the block of key.
func (lz *lazy) block(key string) (span, bool) {
	h := "[" + key + "]"
	at := lz.header(h + "\n")
	if at < 0 {
		if !strings.HasSuffix(lz.text, "\n"+h) {
			return span{}, false
		}
		at = len(lz.text) - len(h)
	}
	end := strings.Index(lz.text[at:], "\n[")
	if end < 0 {
		end = len(lz.text)
	} else {
		end += at + 1
	}
	return span{start: at, end: end, line: strings.Count(lz.text[:at], "\n") + 1}, true
}

// known reports whether prog has any block.
func (lz *lazy) known(prog string) bool {
	if _, ok := lz.block(prog); ok {
		return true
	}
	return lz.header("["+prog+" ") >= 0
}

// blockKey normalizes a block header as Parse does: "[Git  push]" is "git push".
func blockKey(line string) string {
	if k, ok := strings.CutSuffix(line, "]"); ok && simpleKey(k[1:]) {
		return k[1:] // already normal: no copy
	}
	words := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line)[1:], "]"))
	if len(words) == 0 {
		return ""
	}
	words[0] = strings.ToLower(words[0])
	return strings.Join(words, " ")
}

// simpleKey reports whether a header's inside is already a block key:
// lower-case words of letters, digits, - and _, one blank apart.
func simpleKey(k string) bool {
	if k == "" || k[0] == ' ' || k[len(k)-1] == ' ' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		case c == ' ' && k[i-1] != ' ':
		default:
			return false
		}
	}
	return true
}

// program returns a program with its own block parsed, once.
func (lz *lazy) program(name string) *Program {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if p, ok := lz.progs[name]; ok {
		return p
	}
	if !lz.known(name) {
		return nil // not cached: names seen are not kept
	}
	p := &Program{Name: name, subs: map[string]*Block{}, lz: lz}
	p.Root = &Block{Key: name, prog: p}
	lz.load(p, name)
	lz.progs[name] = p
	return p
}

// sub returns a subcommand's block, parsing it on first use.
func (lz *lazy) sub(p *Program, sub string) *Block {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if b, ok := p.subs[sub]; ok {
		return b
	}
	if !lz.load(p, p.Name+" "+sub) {
		return nil
	}
	return p.subs[sub]
}

// load parses one block into p. lz.mu is held.
func (lz *lazy) load(p *Program, key string) bool {
	sp, ok := lz.block(key)
	if !ok {
		return false
	}
	t := &Table{progs: map[string]*Program{p.Name: p}}
	var errs []string
	lines := strings.Split(strings.TrimSuffix(lz.text[sp.start:sp.end], "\n"), "\n")
	t.parseLines(lz.name, lines, sp.line, true, map[string]bool{}, &errs)
	if len(errs) > 0 {
		panic("programs: embedded table: " + strings.Join(errs, "\n"))
	}
	t.indexFacts()
	return true
}

// table parses the whole table, once.
func (lz *lazy) table() *Table {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.full == nil {
		t, err := parse(lz.name, []byte(lz.text), true)
		if err != nil {
			panic("programs: embedded table: " + err.Error())
		}
		lz.full = t
	}
	return lz.full
}

// all returns the table with every block parsed.
func (t *Table) all() *Table {
	if t.lz != nil {
		return t.lz.table()
	}
	return t
}

// Kind is the kind of a fact.
type Kind string

// The kinds of facts; see the package documentation.
const (
	Alias         Kind = "alias"
	Value         Kind = "value"
	Optional      Kind = "optional"
	Exec          Kind = "exec"
	Runs          Kind = "runs"
	Ask           Kind = "ask"
	Write         Kind = "write"
	Output        Kind = "output"
	Writes        Kind = "writes"
	Targets       Kind = "targets"
	Inline        Kind = "inline"
	Script        Kind = "script"
	SingleDash    Kind = "single-dash"
	Bundled       Kind = "bundled"
	GlobalValue   Kind = "global-value"
	GlobalFlag    Kind = "global-flag"
	EnvExec       Kind = "env-exec"
	AssignRuns    Kind = "assign-runs"
	AssignExpands Kind = "assign-expands"
	ConfigExec    Kind = "config-exec"
	ConfigSafe    Kind = "config-safe"
	Help          Kind = "help"
	Code          Kind = "code"
	Like          Kind = "like"
	Reads         Kind = "reads"
	EnvRuns       Kind = "env-runs"
	Runner        Kind = "runner"
	Downloads     Kind = "downloads"
	Network       Kind = "network"
	Hosts         Kind = "hosts"
	Ex            Kind = "ex"
	EnvArgs       Kind = "env-args"
)

// kindInfo says how a kind's arguments read.
type kindInfo struct {
	first    string // "canon", "mode" or "" for the first argument's role
	modes    []string
	args     string // "opts", "names", "keys", "none"
	minArgs  int
	progOnly bool // only in a program's own block
	stricter bool // may be added by a manifest: only makes decisions stricter
	takes    bool // an option it names takes a value
}

var kinds = map[Kind]kindInfo{
	Alias:         {first: "canon", args: "opts", minArgs: 1},
	Value:         {args: "opts", minArgs: 1, takes: true},
	Optional:      {args: "opts", minArgs: 1},
	Exec:          {args: "opts", minArgs: 1, stricter: true, takes: true},
	Runs:          {args: "opts", minArgs: 1, stricter: true, takes: true},
	Ask:           {args: "opts", minArgs: 1, stricter: true},
	Write:         {args: "opts", minArgs: 1, stricter: true, takes: true},
	Output:        {args: "opts", minArgs: 1, stricter: true, takes: true},
	Writes:        {first: "mode", modes: []string{"operands", "unknown", "system", "archive", "discard", "into"}, args: "opts", minArgs: 1, stricter: true},
	Targets:       {first: "mode", modes: []string{"all", "last", "first", "after-first"}, args: "none", stricter: true},
	Inline:        {args: "opts", minArgs: 1, stricter: true, takes: true},
	Script:        {first: "mode", modes: []string{"sed", "awk"}, args: "none", stricter: true},
	SingleDash:    {args: "none", progOnly: true},
	Bundled:       {args: "none", progOnly: true},
	GlobalValue:   {args: "opts", minArgs: 1, progOnly: true},
	GlobalFlag:    {args: "opts", minArgs: 1, progOnly: true},
	EnvExec:       {args: "names", minArgs: 1, stricter: true},
	AssignRuns:    {args: "names", minArgs: 1, stricter: true},
	AssignExpands: {args: "none", stricter: true},
	ConfigExec:    {args: "keys", minArgs: 1, progOnly: true, stricter: true},
	ConfigSafe:    {args: "keys", minArgs: 1, progOnly: true},
	Help:          {args: "none", progOnly: true},
	Code:          {args: "opts", minArgs: 1, stricter: true, takes: true},
	Like:          {args: "words", minArgs: 1},
	Reads:         {args: "globs", minArgs: 1, stricter: true},
	EnvRuns:       {args: "names", minArgs: 1, stricter: true},
	Runner:        {args: "none", stricter: true},
	Downloads:     {args: "opts", stricter: true},
	Network:       {args: "opts", stricter: true},
	Hosts:         {first: "mode", modes: []string{"url", "remote"}, args: "none"},
	Ex:            {args: "opts", minArgs: 1, stricter: true, takes: true},
	EnvArgs:       {args: "names", minArgs: 1, stricter: true},
}

// Fact is one line of a table.
type Fact struct {
	// Key is the block: "git", "git push", "ffx log".
	Key  string
	Kind Kind
	// Arg is the canonical name of an alias, or the mode of writes,
	// targets and script.
	Arg string
	// Args are the options, names or keys the fact is about.
	Args []string
	// File and Line say where the fact was read.
	File string
	Line int
	// Builtin marks the embedded table's facts, which may also make a
	// decision less strict where a program is otherwise misread (a value
	// that looks like a flag).
	Builtin bool
	spells  []spelling // Args read as options, for opts kinds
}

// Program returns the program the fact is about.
func (f *Fact) Program() string {
	p, _, _ := strings.Cut(f.Key, " ")
	return p
}

// String spells the fact as a table line with its position.
func (f *Fact) String() string {
	return fmt.Sprintf("%s:%d: [%s] %s", f.File, f.Line, f.Key, f.text())
}

func (f *Fact) text() string {
	parts := []string{string(f.Kind)}
	if f.Arg != "" {
		parts = append(parts, f.Arg)
	}
	return strings.Join(append(parts, f.Args...), " ")
}

// Table is a set of facts, indexed by program.
type Table struct {
	lz    *lazy // the built-in table, parsed program by program
	facts []*Fact
	order []string // block keys in order of first appearance
	// declared are the block keys the built-in table has a header
	// for (see Block.Reviewed): a manifest's block reviews nothing.
	declared map[string]bool
	progs    map[string]*Program
}

// Facts returns every fact in the order read.
func (t *Table) Facts() []*Fact { return t.all().facts }

// Program returns what the table knows about a program (a lower-case
// basename), or nil.
func (t *Table) Program(name string) *Program {
	if t == nil {
		return nil
	}
	if t.lz != nil {
		return t.lz.program(name)
	}
	return t.progs[name]
}

// Programs returns the names of the programs the table has a block for,
// sorted.
func (t *Table) Programs() []string {
	t = t.all()
	out := make([]string, 0, len(t.progs))
	for p := range t.progs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Without returns a table with every fact but f, for tests that prove each
// fact changes a decision.
func (t *Table) Without(f *Fact) *Table {
	t = t.all()
	out := &Table{order: t.order, declared: t.declared}
	for _, g := range t.facts {
		if g != f {
			out.facts = append(out.facts, g)
		}
	}
	out.index()
	return out
}

// Format spells the table in its text format: Parse(Format()) has the same
// facts.
func (t *Table) Format() []byte {
	t = t.all()
	var sb strings.Builder
	byKey := map[string][]*Fact{}
	for _, f := range t.facts {
		byKey[f.Key] = append(byKey[f.Key], f)
	}
	for i, k := range t.order {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("[" + k + "]\n")
		for _, f := range byKey[k] {
			sb.WriteString(f.text())
			sb.WriteByte('\n')
		}
	}
	return []byte(sb.String())
}

// Merge returns a table with the facts of t and then those of more. A
// manifest's table may only add facts that make decisions stricter: it is
// an error, naming the line, for it to add an alias, a value-taking
// option, a subcommand structure or a safe key.
func (t *Table) Merge(more *Table) (*Table, error) {
	t, more = t.all(), more.all()
	out := &Table{declared: map[string]bool{}}
	seen := map[string]bool{}
	for _, tt := range []*Table{t, more} {
		if tt == nil {
			continue
		}
		for k := range tt.declared {
			out.declared[k] = true
		}
		for _, k := range tt.order {
			if !seen[k] {
				seen[k] = true
				out.order = append(out.order, k)
			}
		}
	}
	out.facts = append(out.facts, t.facts...)
	for _, f := range more.facts {
		if !f.Builtin && !kinds[f.Kind].stricter {
			return nil, fmt.Errorf("%s:%d: %s facts may only come from the built-in table: they can make decisions less strict", f.File, f.Line, f.Kind)
		}
		out.facts = append(out.facts, f)
	}
	out.index()
	return out, nil
}

// Parse reads a table in the text format. Errors name the file and line.
func Parse(name string, data []byte) (*Table, error) {
	return parse(name, data, false)
}

func parse(name string, data []byte, builtin bool) (*Table, error) {
	t := &Table{facts: make([]*Fact, 0, bytes.Count(data, []byte("\n")))}
	var errs []string
	t.parseLines(name, strings.Split(string(data), "\n"), 1, builtin, map[string]bool{}, &errs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	t.index()
	return t, nil
}

// parseLines reads lines (the first numbered first) into t.
func (t *Table) parseLines(name string, lines []string, first int, builtin bool, keys map[string]bool, errs *[]string) {
	key := ""
	for i, line := range lines {
		n := first + i
		errf := func(format string, args ...any) {
			*errs = append(*errs, fmt.Sprintf("%s:%d: %s", name, n, fmt.Sprintf(format, args...)))
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				errf("block header %q does not end in ]", line)
				continue
			}
			words := strings.Fields(line[1 : len(line)-1])
			if len(words) == 0 {
				errf("empty block header")
				continue
			}
			for _, w := range words {
				if !nameOK(w) {
					errf("%q is not a program or subcommand name", w)
				}
			}
			words[0] = strings.ToLower(words[0])
			key = strings.Join(words, " ")
			if keys[key] {
				errf("block [%s] appears twice", key)
			}
			keys[key] = true
			t.order = append(t.order, key)
			if builtin {
				if t.declared == nil {
					t.declared = map[string]bool{}
				}
				t.declared[key] = true
			}
			continue
		}
		if key == "" {
			errf("fact before the first [program] block")
			continue
		}
		words := strings.Fields(line)
		kind := Kind(words[0])
		info, ok := kinds[kind]
		if !ok {
			errf("unknown kind of fact %q", words[0])
			continue
		}
		f := &Fact{Key: key, Kind: kind, File: name, Line: n, Builtin: builtin}
		args := words[1:]
		if info.progOnly && strings.Contains(key, " ") {
			errf("%s belongs in the program's own block [%s]", kind, f.Program())
			continue
		}
		if info.first != "" {
			if len(args) == 0 {
				errf("%s needs a %s", kind, info.first)
				continue
			}
			f.Arg, args = args[0], args[1:]
			switch info.first {
			case "canon":
				if !nameOK(f.Arg) {
					errf("alias name %q is not a flag name", f.Arg)
					continue
				}
			case "mode":
				if !slices.Contains(info.modes, f.Arg) {
					errf("%s mode %q is not one of %s", kind, f.Arg, strings.Join(info.modes, ", "))
					continue
				}
			}
		}
		if info.args == "none" && len(args) > 0 {
			errf("%s takes no arguments", kind)
			continue
		}
		if len(args) < info.minArgs {
			errf("%s needs at least %d argument", kind, info.minArgs)
			continue
		}
		bad := false
		if info.args == "opts" {
			f.spells = make([]spelling, 0, len(args))
		}
		for _, a := range args {
			var err error
			switch info.args {
			case "opts":
				var sp spelling
				sp, err = parseSpelling(a, kind)
				f.spells = append(f.spells, sp)
			case "names":
				if !envName(a) {
					err = fmt.Errorf("%q is not a variable name", a)
				}
			case "keys":
				if !keyOK(a) {
					err = fmt.Errorf("%q is not a configuration key", a)
				}
			case "globs":
				if strings.ContainsAny(a, "/\\") {
					err = fmt.Errorf("%q is not a file name pattern", a)
				}
			case "words":
				if !nameOK(a) || strings.ToLower(a) != a {
					err = fmt.Errorf("%q is not a subcommand word", a)
				}
			}
			if err != nil {
				errf("%v", err)
				bad = true
			}
		}
		if bad {
			continue
		}
		f.Args = args
		t.facts = append(t.facts, f)
	}
}

func nameOK(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && strings.ContainsRune("-_.+", r):
		default:
			return false
		}
	}
	return true
}

func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '*' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func keyOK(s string) bool {
	if s == "" || !strings.Contains(s, ".") {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '-' || r == '*' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// spelling is one OPT of a fact.
type spelling struct {
	name    string // without dashes: "f", "force", "name"; "" for +! and operand shapes
	short   bool   // one dash, one character
	long    bool   // two dashes, or one dash and a longer name
	plus    byte   // '!' or '|' for less's +! and +|
	operand string // "of=" shapes
	prefix  string // OPT@PREFIX, lower case
	contain bool   // PREFIX started with *
}

func parseSpelling(s string, kind Kind) (spelling, error) {
	var sp spelling
	opt, prefix, hasPrefix := strings.Cut(s, "@")
	if hasPrefix {
		if prefix == "" {
			return sp, fmt.Errorf("%q: empty value prefix after @", s)
		}
		if !kinds[kind].takes && kind != Optional && kind != Writes && kind != Ask {
			return sp, fmt.Errorf("%q: %s facts cannot limit values with @", s, kind)
		}
		if c, ok := strings.CutPrefix(prefix, "*"); ok {
			sp.contain, prefix = true, c
			if prefix == "" {
				return sp, fmt.Errorf("%q: empty value after @*", s)
			}
		}
		sp.prefix = strings.ToLower(prefix)
	}
	switch {
	case opt == "+":
		if kind != Ex || hasPrefix {
			return sp, fmt.Errorf("%q: only ex facts name +", s)
		}
		sp.plus = '+'
		return sp, nil
	case opt == "+!" || opt == "+|":
		if kind != Exec || hasPrefix {
			return sp, fmt.Errorf("%q: only exec facts name +! or +|", s)
		}
		sp.plus = opt[1]
		return sp, nil
	case strings.HasSuffix(opt, "=") && !strings.HasPrefix(opt, "-"):
		if !envName(strings.TrimSuffix(opt, "=")) || hasPrefix || (kind != Write && kind != Output && kind != Exec && kind != Runs) {
			return sp, fmt.Errorf("%q: an operand shape NAME= is only for exec, runs, write and output facts", s)
		}
		sp.operand = opt
		return sp, nil
	case strings.HasPrefix(opt, "--"):
		sp.name, sp.long = opt[2:], true
	case strings.HasPrefix(opt, "-"):
		sp.name = opt[1:]
		sp.short = len(sp.name) == 1
		sp.long = !sp.short
	default:
		return sp, fmt.Errorf("%q is not an option (-x, --long, -name)", s)
	}
	if sp.name == "" || strings.ContainsAny(sp.name, "= \t") || strings.HasPrefix(sp.name, "-") {
		return sp, fmt.Errorf("%q is not an option name", s)
	}
	return sp, nil
}

// File is one table file of a manifest overlay: its name (for errors, as
// the checkout-relative path .agents/config/programs.txt) and contents.
type File struct {
	Name string
	Data []byte
}

// WithOverlays returns the built-in table merged with the overlays' files,
// in order. An error names the file and line of every fact that does not
// parse or that could make a decision less strict.
func WithOverlays(files ...File) (*Table, error) {
	t := Builtin()
	var errs []string
	for _, f := range files {
		more, err := Parse(f.Name, f.Data)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		merged, err := t.Merge(more)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		t = merged
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return t, nil
}
