package programs

import (
	"path"
	"strings"
)

// Program is what a table knows about one program.
type Program struct {
	Name string
	// Root is the program's own block, whose facts hold for every
	// subcommand.
	Root *Block
	subs map[string]*Block
	// SingleDash is set when long options take one dash.
	SingleDash *Fact
	// Bundled is set when a first word without a dash is an option
	// cluster (tar xf).
	Bundled *Fact
	// HelpFact is set when `prog help` also allows --help.
	HelpFact *Fact
	globals  map[string]*globalOpt
	config   []configKey
	lz       *lazy // parses subcommand blocks when first asked for
}

type globalOpt struct {
	value bool
	fact  *Fact
}

type configKey struct {
	pattern string // lower case; * matches one dot-free part, or anything at the end
	exec    bool   // config-exec; else config-safe
	fact    *Fact
}

// Block is what a table knows about a program or one of its subcommands.
type Block struct {
	Key    string
	prog   *Program
	parent *Block
	shorts map[byte]*Opt
	longs  map[string]*Opt
	plus   []Effect            // less +! and +|
	shapes map[string][]Effect // operand shapes: "of=" (dd)
	// Targets says which operands the program always writes.
	Targets *Fact
	// Script says the first operand is a program in a language the
	// matcher reads (sed, awk).
	Script        *Fact
	envExec       map[string]*Fact
	assignRuns    map[string]*Fact
	AssignExpands *Fact
	// Like says the block does what another does (git send-pack is
	// git push): its Args are that block's key.
	Like  *Fact
	reads []string // file name patterns of the code it runs (make: Makefile)
	// envRuns are the variables that change what it runs (env-runs),
	// envArgs those that hold its options (env-args).
	envRuns, envArgs []envPattern
	facts            []*Fact
	// declared is set when the table has the block's header: the
	// program or subcommand was reviewed, even with no facts.
	declared bool
	// Runner is set when the block runs the commands its operands give
	// in ways the table does not spell (npx, npm exec): they are read as
	// a program outside the table's are (see the runner fact).
	Runner *Fact
	// Downloads is set when the block always fetches a package and
	// runs it (a downloads fact with no option).
	Downloads *Fact
	// Network is set when the block reaches other machines whatever its
	// options (a network fact with no option); Hosts, when its operands
	// name them.
	Network, Hosts *Fact
}

// Reviewed reports whether the table has the block itself, not only
// blocks of its subcommands: what the program or subcommand does was
// reviewed, and a block with no facts says it runs and writes nothing
// beyond its purpose.
func (b *Block) Reviewed() bool { return b != nil && b.declared }

// DownloadsFact returns the block's downloads fact with no option, or
// its program's, or nil.
func (b *Block) DownloadsFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Downloads != nil {
			return b.Downloads
		}
	}
	return nil
}

// NetworkFact returns the block's network fact with no option, or its
// program's, or nil.
func (b *Block) NetworkFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Network != nil {
			return b.Network
		}
	}
	return nil
}

// HostsFact returns the hosts fact of the block or its program, or nil.
func (b *Block) HostsFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Hosts != nil {
			return b.Hosts
		}
	}
	return nil
}

// RunnerFact returns the runner fact of the block or its program, or nil.
func (b *Block) RunnerFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Runner != nil {
			return b.Runner
		}
	}
	return nil
}

type envPattern struct {
	name string // NAME, or a prefix ending in *
	fact *Fact
}

// EnvRuns returns the fact saying a variable changes what the program runs
// or loads (env-runs), or nil.
func (b *Block) EnvRuns(name string) *Fact {
	for ; b != nil; b = b.parent {
		for _, e := range b.envRuns {
			if stem, ok := strings.CutSuffix(e.name, "*"); ok && strings.HasPrefix(name, stem) || e.name == name {
				return e.fact
			}
		}
	}
	return nil
}

// EnvArgs returns the fact saying a variable holds options the program
// reads as its own (env-args), or nil.
func (b *Block) EnvArgs(name string) *Fact {
	for ; b != nil; b = b.parent {
		for _, e := range b.envArgs {
			if e.name == name {
				return e.fact
			}
		}
	}
	return nil
}

// Reads returns the file name patterns of the code the program runs from
// its working directory (see the reads fact).
func (b *Block) Reads() []string {
	var out []string
	for ; b != nil; b = b.parent {
		out = append(out, b.reads...)
	}
	return out
}

// ValueMode says whether an option takes a value.
type ValueMode int

const (
	// NoValue options take no value.
	NoValue ValueMode = iota
	// Required options take a value, attached or as the next word.
	Required
	// Attached options take a value only when it is attached (sed -i.bak).
	Attached
)

// Opt is what a table knows about one option of a block.
type Opt struct {
	// Canon are the flag names the option stands for (rm -R: recursive).
	Canon []string
	// Takes says whether it takes a value.
	Takes ValueMode
	// Consumes is set when the built-in table says the option takes a
	// value: only then is a value that looks like a flag read as a value.
	Consumes bool
	// Effects are what the option makes the program do.
	Effects []Effect
	// Builtin is set when every fact that named the option is built in.
	Builtin bool
	named   bool // some fact named it
}

// Effect is one thing an option makes a program do.
type Effect struct {
	Kind Kind   // Exec, Runs, Ask, Write, Output, Writes, Inline
	Mode string // writes: operands, unknown, system
	// Prefix limits the effect to values starting with it (or
	// containing it, with Contain), ASCII case ignored.
	Prefix  string
	Contain bool
	// Plus is '!' or '|' for less's +! and +|.
	Plus byte
	Fact *Fact
}

// Applies reports whether the effect holds for an option's value. An
// effect with a prefix holds for a value not known (known false) too.
func (e Effect) Applies(value string, known bool) bool {
	if e.Prefix == "" || !known {
		return true
	}
	v := strings.ToLower(value)
	if e.Contain {
		return strings.Contains(v, e.Prefix)
	}
	return strings.HasPrefix(v, e.Prefix)
}

// Rest returns the part of a value after the effect's prefix: the command
// line of --checkpoint-action=exec=CMD.
// With a containing prefix it is what follows the prefix's first
// occurrence: the runner of cargo --config 'target.x.runner="CMD"'.
func (e Effect) Rest(value string) string {
	if e.Contain && e.Prefix != "" {
		if i := strings.Index(strings.ToLower(value), e.Prefix); i >= 0 {
			return value[i+len(e.Prefix):]
		}
		return value
	}
	if e.Prefix == "" || len(value) < len(e.Prefix) {
		return value
	}
	return value[len(e.Prefix):]
}

func (t *Table) index() {
	t.progs = map[string]*Program{}
	t.indexFacts()
}

// indexFacts adds the table's blocks and facts to its programs.
func (t *Table) indexFacts() {
	for _, k := range t.order {
		if b := t.block(k); t.declared[k] {
			b.declared = true
		}
	}
	for _, f := range t.facts {
		b := t.block(f.Key)
		b.facts = append(b.facts, f)
		p := b.prog
		if f.Kind == Downloads && len(f.Args) == 0 {
			b.Downloads = f
			continue
		}
		if f.Kind == Network && len(f.Args) == 0 {
			b.Network = f
			continue
		}
		info := kinds[f.Kind]
		switch f.Kind {
		case SingleDash:
			p.SingleDash = f
		case Bundled:
			p.Bundled = f
		case Help:
			p.HelpFact = f
		case Like:
			b.Like = f
		case Reads:
			b.reads = append(b.reads, f.Args...)
		case EnvRuns:
			for _, a := range f.Args {
				b.envRuns = append(b.envRuns, envPattern{name: a, fact: f})
			}
		case EnvArgs:
			for _, a := range f.Args {
				b.envArgs = append(b.envArgs, envPattern{name: a, fact: f})
			}
		case Targets:
			b.Targets = f
		case Runner:
			b.Runner = f
		case Hosts:
			b.Hosts = f
		case Script:
			b.Script = f
		case AssignExpands:
			b.AssignExpands = f
		case GlobalValue, GlobalFlag:
			if p.globals == nil {
				p.globals = map[string]*globalOpt{}
			}
			for _, a := range f.Args {
				p.globals[a] = &globalOpt{value: f.Kind == GlobalValue, fact: f}
			}
		case ConfigExec, ConfigSafe:
			for _, a := range f.Args {
				p.config = append(p.config, configKey{pattern: strings.ToLower(a), exec: f.Kind == ConfigExec, fact: f})
			}
		case EnvExec, AssignRuns:
			m := &b.envExec
			if f.Kind == AssignRuns {
				m = &b.assignRuns
			}
			if *m == nil {
				*m = map[string]*Fact{}
			}
			for _, a := range f.Args {
				(*m)[a] = f
			}
		default:
			for i, a := range f.Args {
				var sp spelling
				if i < len(f.spells) {
					sp = f.spells[i]
				} else {
					sp, _ = parseSpelling(a, f.Kind)
				}
				e := Effect{Kind: f.Kind, Mode: f.Arg, Prefix: sp.prefix, Contain: sp.contain, Plus: sp.plus, Fact: f}
				switch {
				case sp.plus != 0:
					b.plus = append(b.plus, e)
					continue
				case sp.operand != "":
					if b.shapes == nil {
						b.shapes = map[string][]Effect{}
					}
					b.shapes[sp.operand] = append(b.shapes[sp.operand], e)
					continue
				}
				o := b.opt(sp)
				o.Builtin = f.Builtin && (o.Builtin || !o.named)
				o.named = true
				switch f.Kind {
				case Alias:
					o.Canon = append(o.Canon, f.Arg)
					continue
				case Value:
					o.Takes = Required
				case Optional:
					o.Takes = Attached
				default:
					if info.takes && o.Takes == NoValue {
						o.Takes = Required
					}
				}
				if f.Builtin && (f.Kind == Value || info.takes) && o.Takes == Required {
					o.Consumes = true
				}
				if f.Kind != Value && f.Kind != Optional {
					o.Effects = append(o.Effects, e)
				}
			}
		}
	}
}

// block returns the block for key, creating it and its program.
func (t *Table) block(key string) *Block {
	name, sub, _ := strings.Cut(key, " ")
	p := t.progs[name]
	if p == nil {
		p = &Program{Name: name, subs: map[string]*Block{}}
		p.Root = &Block{Key: name, prog: p}
		t.progs[name] = p
	}
	if sub == "" {
		return p.Root
	}
	b := p.subs[sub]
	if b == nil {
		b = &Block{Key: key, prog: p, parent: p.Root}
		p.subs[sub] = b
	}
	return b
}

func (b *Block) opt(sp spelling) *Opt {
	if sp.short && b.prog.SingleDash == nil {
		if b.shorts == nil {
			b.shorts = map[byte]*Opt{}
		}
		o := b.shorts[sp.name[0]]
		if o == nil {
			o = &Opt{}
			b.shorts[sp.name[0]] = o
		}
		return o
	}
	if b.longs == nil {
		b.longs = map[string]*Opt{}
	}
	o := b.longs[sp.name]
	if o == nil {
		o = &Opt{}
		b.longs[sp.name] = o
	}
	return o
}

// Facts returns the facts of the block itself.
func (b *Block) Facts() []*Fact { return b.facts }

// Program returns the program the block belongs to.
func (b *Block) Program() *Program { return b.prog }

// Short returns the short option ch, looking in the program's block when
// the subcommand's does not know it.
func (b *Block) Short(ch byte) *Opt {
	for ; b != nil; b = b.parent {
		if o := b.shorts[ch]; o != nil {
			return o
		}
	}
	return nil
}

// Long returns the long option name (without dashes).
func (b *Block) Long(name string) *Opt {
	for ; b != nil; b = b.parent {
		if o := b.longs[name]; o != nil {
			return o
		}
	}
	return nil
}

// Abbrev returns what a long option name not known by itself could
// abbreviate (getopt and git accept unique prefixes: --upload-p): the
// effects of every option it is a prefix of. It never consumes a value.
func (b *Block) Abbrev(name string) *Opt {
	// GNU getopt takes a one-letter prefix too: date --s is --set.
	if len(name) < 1 || b.prog.SingleDash != nil {
		return nil
	}
	var out *Opt
	for bb := b; bb != nil; bb = bb.parent {
		for n, o := range bb.longs {
			if len(n) > len(name) && strings.HasPrefix(n, name) {
				if out == nil {
					out = &Opt{}
				}
				out.Effects = append(out.Effects, o.Effects...)
				out.named = true // never Builtin: an abbreviation is a guess
				if o.Takes == Required {
					out.Takes = Required
				}
			}
		}
	}
	return out
}

// Plus returns the effects of words starting with + (less +!cmd).
func (b *Block) Plus() []Effect {
	var out []Effect
	for ; b != nil; b = b.parent {
		out = append(out, b.plus...)
	}
	return out
}

// Shape returns the effects of an operand NAME=VALUE of a known shape
// (dd of=FILE), with the value.
func (b *Block) Shape(word string) ([]Effect, string) {
	i := strings.IndexByte(word, '=')
	if i < 0 {
		return nil, ""
	}
	for bb := b; bb != nil; bb = bb.parent {
		if e := bb.shapes[word[:i+1]]; e != nil {
			return e, word[i+1:]
		}
	}
	return nil, ""
}

// EnvExec returns the fact saying an environment variable's value is a
// command line for this program, or nil.
// A name of the table may hold * for any run of characters
// (CARGO_TARGET_*_RUNNER).
func (b *Block) EnvExec(name string) *Fact {
	for ; b != nil; b = b.parent {
		if f := b.envExec[name]; f != nil {
			return f
		}
		for pat, f := range b.envExec {
			if strings.Contains(pat, "*") {
				if ok, _ := path.Match(pat, name); ok {
					return f
				}
			}
		}
	}
	return nil
}

// AssignRuns returns the fact saying an operand NAME=VALUE names a
// program this program runs, or nil.
func (b *Block) AssignRuns(name string) *Fact {
	for ; b != nil; b = b.parent {
		if f := b.assignRuns[name]; f != nil {
			return f
		}
	}
	return nil
}

// Expands returns the fact saying NAME=VALUE operands are expanded, or nil.
func (b *Block) Expands() *Fact {
	for ; b != nil; b = b.parent {
		if b.AssignExpands != nil {
			return b.AssignExpands
		}
	}
	return nil
}

// TargetsFact returns the block's targets fact, or its program's.
func (b *Block) TargetsFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Targets != nil {
			return b.Targets
		}
	}
	return nil
}

// ScriptFact returns the block's script fact, or its program's.
func (b *Block) ScriptFact() *Fact {
	for ; b != nil; b = b.parent {
		if b.Script != nil {
			return b.Script
		}
	}
	return nil
}

// Sub returns the block of a subcommand ("push", "log dump"), or nil.
func (p *Program) Sub(sub string) *Block {
	if p == nil {
		return nil
	}
	if p.lz != nil {
		return p.lz.sub(p, sub)
	}
	return p.subs[sub]
}

// Global reports whether word is one of the program's options before its
// subcommand, and whether it takes a value (when not attached with =).
func (p *Program) Global(word string) (value, ok bool, f *Fact) {
	if p == nil || p.globals == nil {
		return false, false, nil
	}
	name, _, hasEq := strings.Cut(word, "=")
	g := p.globals[name]
	if g == nil {
		return false, false, nil
	}
	return g.value && !hasEq, true, g.fact
}

// HasGlobals reports whether the program has options before its subcommand.
func (p *Program) HasGlobals() bool { return p != nil && len(p.globals) > 0 }

// ConfigKey classifies a configuration key (git -c KEY=VALUE): exec when
// its value is a command line, safe when it never makes the program run
// anything. A key neither exec nor safe may do anything.
func (p *Program) ConfigKey(key string) (exec, safe bool, f *Fact) {
	if p == nil {
		return false, false, nil
	}
	k := strings.ToLower(key)
	for _, c := range p.config {
		if c.exec && keyMatch(c.pattern, k) {
			return true, false, c.fact
		}
	}
	for _, c := range p.config {
		if !c.exec && keyMatch(c.pattern, k) {
			return false, true, c.fact
		}
	}
	return false, false, nil
}

// keyMatch matches a configuration key against a pattern whose * matches
// one or more dot-free characters, or anything at the pattern's end.
func keyMatch(pat, key string) bool {
	i := strings.IndexByte(pat, '*')
	if i < 0 {
		return pat == key
	}
	if !strings.HasPrefix(key, pat[:i]) {
		return false
	}
	key, pat = key[i:], pat[i+1:]
	if pat == "" {
		return key != ""
	}
	// The * covers up to the next dot of key (subsection names may
	// hold dots: take the last candidate that lets the rest match).
	matched := false
	for j := len(key); j >= 1; j-- {
		if keyMatch(pat, key[j:]) {
			matched = true
			break
		}
	}
	return matched
}

// Name reduces a program as written to the name the table knows it by:
// its basename (either slash), lower case (case-insensitive file
// systems), without .exe: C:/Program Files/Git/bin/git.EXE is git.
func Name(prog string) string {
	if i := strings.LastIndexAny(prog, `/\`); i >= 0 {
		prog = prog[i+1:]
	}
	prog = strings.ToLower(prog)
	for _, ext := range []string{".exe", ".com", ".cmd", ".bat"} {
		if p, ok := strings.CutSuffix(prog, ext); ok && p != "" {
			prog = p
			break
		}
	}
	return path.Clean(prog)
}
