package matcher

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Policy is a set of rules, indexed by the program they apply to. It is safe
// for concurrent use once built.
type Policy struct {
	byProg map[string][]*Rule
	byKey  map[string][]*Rule // regex grants by their key (see index.go)
	global []*Rule            // rules that may match any program (regex, command(*))
	rules  []*Rule            // every rule, in the order added
	// noIndex puts every regex grant in global and compiles every rule
	// of the program (no mayLead): the plain scan tests compare with.
	noIndex bool
	tbl     *programs.Table
	home    string
	inScope func(dir string) bool // see SetScope
	network bool                  // reaching other machines is allowed (see SetNetwork)
	next    int                   // the position of the next rule added
	lazy    *lazy                 // set when the rules are read from a store (see Open)

	toolOnce sync.Once   // tools is made on first use
	tools    []*toolRule // the tool rules (see DecideTool)
}

// SetPrograms sets the table of program facts decisions use; the default
// is programs.Builtin(). Rules compile with the table of the first decision
// that needs them, so set it before deciding.
func (p *Policy) SetPrograms(t *programs.Table) { p.tbl = t }

// SetHome sets the home directory (absolute). Deny and ask rules about ~
// then also hold for that path spelled out, and rules about ~ itself for
// its parents (rm -rf /home/me and rm -rf /home are rm -rf ~ and worse).
func (p *Policy) SetHome(dir string) {
	if dir != "" && strings.HasPrefix(dir, "/") {
		p.home = path.Clean(dir)
	}
}

// SetScope sets how an absolute directory is judged: contains reports
// whether it is inside the project (the gate's scope). git, and the
// programs that run their working directory's code (make, go test, npm:
// see the table's reads facts), run in a directory outside it only with a
// person's answer: that repository's configuration and hooks, that
// Makefile, run. Without a scope every absolute directory is outside;
// relative ones are inside unless .. leaves where the line started.
func (p *Policy) SetScope(contains func(dir string) bool) { p.inScope = contains }

func (p *Policy) programs() *programs.Table {
	if p.tbl == nil {
		return programs.Builtin()
	}
	return p.tbl
}

// New returns an empty policy: every command is Default.
func New() *Policy {
	return &Policy{byProg: map[string][]*Rule{}}
}

// Add adds a rule: a manifest line or a grant string. It is compiled when a
// decision first needs it (or by Check).
func (p *Policy) Add(d Decision, text string, src Source) *Rule {
	r := &Rule{Text: strings.TrimSpace(text), Decision: d, Source: src}
	p.add(r)
	return r
}

// AddLines adds rules as Add does, one for each text, all with decision
// d and source src, and returns them in order: one allocation for all.
func (p *Policy) AddLines(d Decision, texts []string, src Source) []*Rule {
	rules := make([]Rule, len(texts))
	out := make([]*Rule, len(texts))
	for i, text := range texts {
		r := &rules[i]
		r.Text, r.Decision, r.Source = strings.TrimSpace(text), d, src
		p.add(r)
		out[i] = r
	}
	return out
}

// add adds r, indexed by its program, else by its regex key (grantKey).
func (p *Policy) add(r *Rule) {
	r.seq = p.next
	p.next++
	p.rules = append(p.rules, r)
	if prog := program(r.Text); prog != "" {
		r.lead, r.lead2, _ = leadWords(r.Text)
		p.byProg[prog] = append(p.byProg[prog], r)
		return
	}
	key := grantKey(r.Text)
	r.key = key
	if key != "" && !p.noIndex {
		if p.byKey == nil {
			p.byKey = map[string][]*Rule{}
		}
		p.byKey[key] = append(p.byKey[key], r)
		return
	}
	p.global = append(p.global, r)
}

// Rules returns every rule in the order added; a policy read from a
// store (see Open) is read whole first, and a store that cannot be read
// yields the rules read so far.
func (p *Policy) Rules() []*Rule {
	p.loadAll()
	return p.rules
}

// Clone returns a policy with the same rules, to which more can be added
// without changing p. The rules themselves are shared, compiled once; a
// policy read from a store is read whole first.
func (p *Policy) Clone() *Policy {
	p.loadAll()
	out := &Policy{
		tbl:     p.tbl,
		home:    p.home,
		inScope: p.inScope,
		network: p.network,
		byProg:  make(map[string][]*Rule, len(p.byProg)),
		global:  slices.Clip(p.global),
		rules:   slices.Clip(p.rules),
		noIndex: p.noIndex,
		next:    p.next,
	}
	for k, v := range p.byProg {
		out.byProg[k] = slices.Clip(v)
	}
	if p.byKey != nil {
		out.byKey = make(map[string][]*Rule, len(p.byKey))
		for k, v := range p.byKey {
			out.byKey[k] = slices.Clip(v)
		}
	}
	return out
}

// Managed is a rule agents-setup manages in config.json: the manifest line,
// where it came from, and the grants it was expanded to.
type Managed struct {
	Line   string
	Source Source
	Grants []string
}

// FromGrants builds the policy of an agent's config.json: its allow, ask and
// deny grant lists, where a grant that belongs to a managed rule is matched
// by that rule's manifest line, with the verdict of the list it sits in.
func FromGrants(allow, ask, deny []string, managed []Managed) *Policy {
	byGrant := make(map[string]*Managed)
	for i := range managed {
		for _, g := range managed[i].Grants {
			if _, dup := byGrant[g]; !dup {
				byGrant[g] = &managed[i]
			}
		}
	}
	p := New()
	// Hand regex grants can be thousands: size their index once.
	regexes := 0
	for _, l := range [][]string{allow, ask, deny} {
		for _, g := range l {
			if strings.HasPrefix(g, "command(regex:") {
				regexes++
			}
		}
	}
	if regexes > 0 {
		p.byKey = make(map[string][]*Rule, regexes)
	}
	type key struct {
		d    Decision
		line string
	}
	seen := map[key]bool{}
	for _, list := range []struct {
		d      Decision
		grants []string
	}{{Deny, deny}, {Ask, ask}, {Allow, allow}} {
		for _, g := range list.grants {
			m, ok := byGrant[g]
			if !ok {
				p.add(&Rule{Text: g, Decision: list.d})
				continue
			}
			k := key{list.d, m.Line}
			if seen[k] {
				continue
			}
			seen[k] = true
			p.add(&Rule{Text: m.Line, Decision: list.d, Source: m.Source, Grant: g})
		}
	}
	return p
}

// Check compiles every rule and reports those that cannot be read, each
// naming its source. Grants for other tools (read_file(…)) are skipped.
func (p *Policy) Check() error {
	var errs []error
	if err := p.loadAll(); err != nil {
		errs = append(errs, err)
	}
	for _, r := range p.rules {
		if err := r.compile(p.programs()); err != nil && !errors.Is(err, errNotCommand) {
			if src := r.Source.String(); src != "" {
				err = fmt.Errorf("%s: %w", src, err)
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Result is the decision for a whole command line.
type Result struct {
	Decision Decision
	// Reason explains the decision in one line.
	Reason string
	// Commands holds one verdict per command the line would execute.
	Commands []Verdict
	// Err is the parse error, when the line does not parse.
	Err error
}

// Verdict is the decision for one command.
type Verdict struct {
	Command *shellparse.Command
	// Argv is the command as the rules see it: program basename, git's
	// global options dropped.
	Argv     []string
	Decision Decision
	// Rule is the rule that decided, or nil.
	Rule   *Rule
	Reason string
	// Fact is the program fact (see package programs) that made the
	// verdict stricter than the rules alone would, as file:line: [block]
	// fact; empty when none did.
	Fact string
	// Floor is what held the command back from the allow rule that
	// matches it (Rule, with Decision Allow, while the verdict is not):
	// a floor such as a write outside the scope, or an allow rule that
	// may not apply. Empty otherwise.
	Floor string
	// Unreadable reports that the verdict asks because a rule or the
	// policy itself could not be read: a rule's concern, not what a
	// static reading of the command cannot know.
	Unreadable bool
	// Inside is the command line a deny rule matched when it is not the
	// command itself but a line it runs (through an option, a variable,
	// or its arguments); empty otherwise.
	Inside string
	// Network says what the command reaches on other machines when that
	// is a reason it asks: not where the level allows it (SetNetwork), or
	// an allow rule names the program that does (see network.go). The
	// run-time layer does not confine it.
	Network string

	// Unmatched reports a Default only because no rule matches: nothing
	// else (a limit, a rule that may apply) holds the command back.
	Unmatched bool
	// Layered reports that DecideUnderLayer left a limit to the run-time
	// layer: the static reading alone would be stricter.
	Layered bool
}

// Decide parses a command line and decides it.
func (p *Policy) Decide(line string) *Result {
	s, err := shellparse.Parse(line)
	if err != nil {
		return &Result{Decision: Ask, Err: err, Reason: fmt.Sprintf("does not parse: %v", err)}
	}
	return p.decideScript(s, 0)
}

// maxNested bounds how deep command lines inside option values (git
// --upload-pack='…', tar --checkpoint-action=exec=…) are followed.
const maxNested = 4

func (p *Policy) decideScript(s *shellparse.Script, depth int) *Result {
	res := &Result{Decision: Allow, Reason: "runs nothing", Commands: make([]Verdict, 0, len(s.Commands))}
	first := true
	for _, cmd := range s.Commands {
		v := p.decideCommand(cmd, depth)
		res.Commands = append(res.Commands, v)
		if first || v.Decision.rank() > res.Decision.rank() {
			res.Decision, res.Reason = v.Decision, v.Explain()
			if len(s.Commands) > 1 {
				res.Reason = strings.Join(v.Argv, " ") + ": " + res.Reason
			}
			first = false
		}
	}
	return res
}

// runsWritten returns why cmd runs code an earlier command of the same
// line wrote, "" when it does not: the program itself (cp /usr/bin/git
// /tmp/g && /tmp/g …), the script a shell or interpreter runs (sh x.sh),
// or a file a program runs its working directory's code from (Makefile
// for make: see the table's reads facts). built reports that only a build
// or an edit in place wrote it (see shellparse.Command.Built).
func (p *Policy) runsWritten(cmd *shellparse.Command, written []string) (why string, built bool) {
	if len(cmd.Args) == 0 || !cmd.Args[0].Static {
		return "", false
	}
	clean := func(t string) string {
		if !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "~") && cmd.Dir != "" {
			t = path.Join(cmd.Dir, t)
		}
		return path.Clean(t)
	}
	prog := cmd.Args[0].Text
	if p := clean(prog); strings.Contains(prog, "/") && slices.Contains(written, p) {
		return fmt.Sprintf("runs %s, which an earlier command on the line wrote", prog), shownOrBuilt(cmd, p)
	}
	name := path.Base(prog)
	if shellparse.RunsFile(name) {
		for _, a := range cmd.Args[1:] {
			if a.Static && strings.HasPrefix(a.Text, "-") {
				continue
			}
			if p := clean(a.Text); a.Static && slices.Contains(written, p) {
				return fmt.Sprintf("%s runs %s, which an earlier command on the line wrote", name, a.Text), shownOrBuilt(cmd, p)
			}
			break
		}
	}
	c := newCall(p.programs(), cmd.Args, cmd.Dir)
	if c.block == nil {
		return "", false
	}
	globs := c.block.Reads()
	for _, w := range written {
		for _, g := range globs {
			if ok, _ := path.Match(g, path.Base(w)); ok {
				return fmt.Sprintf("%s runs code from %s, which an earlier command on the line wrote", c.key, w), shownOrBuilt(cmd, w)
			}
		}
	}
	return "", false
}

// shownOrBuilt reports whether the file p an earlier command wrote holds
// what the line showed of it (cmd.Shown: its text was decided), or only a
// build or an edit in place wrote it (cmd.Built).
func shownOrBuilt(cmd *shellparse.Command, p string) bool {
	return p == cmd.Shown || slices.Contains(cmd.Built, p)
}

// teeWrites reports whether tee names a file other than /dev/null.
func teeWrites(c *call) bool {
	for _, t := range c.toks {
		if (t.kind == posTok && t.text != "/dev/null") || t.kind == wildTok {
			return true
		}
	}
	return false
}

// DecideCommand decides one command.
func (p *Policy) DecideCommand(cmd *shellparse.Command) Verdict {
	return p.decideCommand(cmd, 0)
}

// DecideUnderLayer decides one command that runs under the run-time layer
// (package supervisor), as DecideCommand does but for the limits that
// stand only for what the layer decides as it happens: what the command
// runs that the static reading cannot see into (a program by path or not
// known statically, a script, inline code, a file an earlier command
// wrote, a program an option names: each execution it makes is decided
// by the same rules), and, when confined, what it writes (the layer
// confines the tree's writes). What the layer does not decide still
// limits the command: network, reads of secrets, servers outside the
// tree, destruction inside the scope, rules that cannot be read, and
// command lines the static reading reads itself (decided as what they
// are). Verdict.Layered says whether a limit was left to the layer.
func (p *Policy) DecideUnderLayer(cmd *shellparse.Command, confined bool) Verdict {
	return p.decideAt(cmd, 0, layerExec, confined)
}

func (p *Policy) decideCommand(cmd *shellparse.Command, depth int) Verdict {
	return p.decideAt(cmd, depth, layerNone, false)
}

// decideAt decides a command and the program it runs as (Alias):
// an ask or deny of either decides; else an allow of either allows (a
// rule for python3 -m pytest, or for pytest, allows python3 -m pytest)
// where nothing but the lack of a rule held the command itself back.
// Under the layer (layer layerExec) the limits the layer decides are left
// out (see DecideUnderLayer).
func (p *Policy) decideAt(cmd *shellparse.Command, depth int, layer layerKind, confined bool) Verdict {
	v := p.decideOne(cmd, depth, layer, confined)
	if len(cmd.Alias) == 0 || v.Decision == Deny {
		return v
	}
	as := *cmd
	as.Args, as.Alias = cmd.Alias, nil
	a := p.decideOne(&as, depth, layer, confined)
	switch {
	case a.Decision == Deny, a.Decision == Ask && v.Decision != Ask:
		a.Command, a.Reason = cmd, fmt.Sprintf("runs as `%s`, which %s", strings.Join(a.Argv, " "), a.Reason)
		a.Argv = v.Argv
		return a
	case v.Unmatched && a.Decision == Allow:
		v.Decision, v.Rule, v.Reason = Allow, a.Rule, fmt.Sprintf("runs as `%s`, which %s", strings.Join(a.Argv, " "), a.Reason)
	}
	return v
}

func (p *Policy) decideOne(cmd *shellparse.Command, depth int, layer layerKind, confined bool) Verdict {
	tbl := p.programs()
	c := newCallEnv(tbl, cmd.Args, cmd.Dir, cmd.Assigns, cmd.Vars)
	v := Verdict{Command: cmd, Argv: c.argv}
	// floors make the command at least Ask; blocks keep an allow rule
	// from allowing it (Ask), but leave an unmatched command Default.
	floors, blocks := c.floors, c.blocks
	var defaults []limit
	switch {
	case cmd.Unknown != "" && cmd.Opaque:
		// Code that computes what it runs: never allowed, else left to
		// the agent, as a script of the checkout is. Under the layer
		// each execution it makes is decided.
		defaults = append(defaults, limit{why: cmd.Unknown, layer: layerExec})
	case cmd.Unknown != "":
		// What cannot be read statically runs in the tree, where each
		// execution is decided (a caller that knows it runs elsewhere,
		// such as on a tmux server, decides it statically).
		floors = append([]limit{{why: cmd.Unknown, layer: layerExec}}, floors...)
	}
	if len(cmd.Written) > 0 {
		// A program or script the line wrote is at least asked: a copy
		// of another program (cp /bin/sh ./s), another program's output
		// (curl … > x.sh). One a build or an edit in place wrote is the
		// checkout's code, as opaque as a script of it, and one the line
		// wrote out with text it shows was decided from that text
		// (cat <<'EOF' > x.sh): never allowed (an allow rule for make
		// asks), else left to the agent (g++ -o x x.c && ./x; sed -i …
		// f.py && python3 f.py). Under the layer each execution it
		// makes is decided.
		switch why, built := p.runsWritten(cmd, cmd.Written); {
		case why != "" && built:
			blocks = append(blocks, limit{why: why, layer: layerExec})
		case why != "":
			floors = append(floors, limit{why: why, layer: layerExec})
		}
	}
	if why := p.foreignDir(c, cmd); why != "" {
		floors = append(floors, limit{why: why, layer: layerExec})
	}
	if len(cmd.Args) > 1 || len(cmd.Redirs) > 0 {
		if s := p.secret(cmd); s != "" {
			floors = append(floors, limit{why: "reads " + s + ", which holds a secret"})
		}
	}
	for _, r := range cmd.Redirs {
		if r.Kind == shellparse.Write {
			// A target not known statically is confined under the
			// layer; a static one is decided where it lies (a caller
			// drops the writes it lets the command make).
			lim := limit{why: fmt.Sprintf("writes %s (%s)", r.Target.Text, r.Op), fact: c.writeFact(r.Op)}
			if !r.Target.Static {
				lim.layer = layerWrite
			}
			floors = append(floors, lim)
		}
	}
	if cmd.Network != "" {
		floors = append(floors, networkLimit(cmd.Network, nil))
	}
	if c.key == "tee" && !cmd.TableWrites && teeWrites(c) {
		// Decided from an argv alone (at run time): the files tee
		// writes are not write redirections of the command.
		floors = append(floors, limit{why: "tee writes a file", layer: layerWrite})
	}
	bare := len(cmd.Args) == 0 || cmd.Decl != ""
	var sets []string
	for _, a := range cmd.Assigns {
		if envSafe(a.Name, a.Value.Text, a.Value.Static) {
			continue
		}
		var f *programs.Fact
		if c.block != nil && !bare {
			f = c.block.EnvExec(a.Name)
		}
		if f != nil && !f.Builtin {
			// A manifest's fact: a floor, and a deny inside.
			if a.Value.Static {
				c.nested = append(c.nested, nested{script: strings.TrimLeft(a.Value.Text, "|-"), via: a.Name + "=", fact: f.String()})
			}
			floors = append(floors, limit{why: fmt.Sprintf("%s= runs a command line", a.Name), fact: f.String()})
			continue
		}
		if f != nil || a.Name == "LESS" || programs.ExecEnv(a.Name) {
			// A command line (or less's options) set on the line:
			// decided by what it says when it is written out.
			fact := ""
			if f != nil {
				fact = f.String()
			}
			switch {
			case a.Value.Static && a.Name == "LESS":
				for _, script := range lessCommands(a.Value.Text) {
					c.nested = append(c.nested, nested{script: script, via: "LESS=", decide: true})
				}
				continue
			case a.Value.Static:
				c.nested = append(c.nested, nested{script: strings.TrimLeft(a.Value.Text, "|-"), via: a.Name + "=", fact: fact, decide: true})
				continue
			case !bare:
				floors = append(floors, limit{why: fmt.Sprintf("%s= runs a command line not known statically: %s", a.Name, a.Value.Text), fact: fact, layer: builtinExec(f)})
				continue
			}
		}
		if f := c.block.EnvArgs(a.Name); f != nil && !bare && a.Value.Static && depth < maxNested {
			// Options in the environment (TAR_OPTIONS, MANOPT,
			// MAKEFLAGS): the command they make, decided for a deny.
			c.nested = append(c.nested, nested{script: quote(c.prog) + " " + a.Value.Text, via: a.Name + "=", fact: f.String()})
			if c.block.Expands() != nil {
				// make's NAME!=CMD, spelled with blanks inside.
				c.operandEffects(a.Value.Text)
			}
		}
		switch {
		case envSafe(a.Name, a.Value.Text, a.Value.Static):
		case a.Name == "IFS" && c.prog == "read" && len(cmd.Args) > 0 && cmd.Args[0].Text == "read":
			// IFS= read -r line: how the builtin splits the line.
		case bare && hasLower(a.Name):
			// A shell variable, not a program's environment.
		case bare:
			sets = append(sets, a.Name)
		case runsEnv(a.Name):
			// PATH=, LD_PRELOAD=, GIT_DIR=: the layer asks about what
			// the loader loads; a person decides the line.
			blocks = append(blocks, limit{why: fmt.Sprintf("%s= can change what runs", a.Name)})
		case c.block != nil && c.block.EnvRuns(a.Name) != nil:
			f := c.block.EnvRuns(a.Name)
			blocks = append(blocks, limit{why: fmt.Sprintf("%s= changes what %s runs", a.Name, c.prog), fact: f.String(), layer: builtinExec(f)})
		case c.block != nil && c.block.EnvExec(a.Name) != nil:
			blocks = append(blocks, limit{why: fmt.Sprintf("%s= can change what runs", a.Name), layer: builtinExec(c.block.EnvExec(a.Name))})
		}
	}
	for _, f := range cmd.Nesting {
		if privileged[f.Kind] {
			blocks = append(blocks, limit{why: fmt.Sprintf("runs as another user (%s)", f.Kind)})
			break
		}
	}
	// Command lines the command runs through its options: a deny inside
	// is a deny; anything else is at least the floor recorded with it,
	// or, for a line the option is for (decide), what the line is: an
	// ask is an ask, and a line no rule matches leaves the command no
	// better than default.
	var argDeny *Rule
	var argText string
	for _, n := range c.nested {
		d, why, r, byPath, unreadable, network := p.decideNested(n.script, depth)
		if d == Deny {
			v.Decision, v.Rule, v.Fact, v.Inside = Deny, r, n.fact, n.script
			v.Reason = fmt.Sprintf("runs `%s` (%s), which %s", n.script, n.via, why)
			return v
		}
		if !n.decide {
			continue
		}
		lim := limit{why: fmt.Sprintf("runs `%s` (%s), which %s", n.script, n.via, why), fact: n.fact, flags: n.flags, unreadable: unreadable}
		if byPath != "" && d != Ask {
			// A program the line names by path (--exec=/tmp/x): a file
			// it may have put there, not a command it shows.
			d, lim.why, lim.layer = Ask, fmt.Sprintf("runs %s (%s), a program named by its path", byPath, n.via), layerExec
		}
		if lim.layer == layerNone && !network && !unreadable {
			// The line runs as a program of its own (git and man
			// hand it to sh -c): under the layer its every
			// execution is decided as it happens, with the words
			// it has then.
			lim.layer = layerExec
		}
		switch d {
		case Ask:
			floors = append(floors, lim)
		case Default:
			defaults = append(defaults, lim)
		}
	}
	if r, text, certain, why := p.readArgs(c, cmd, depth); r != nil && certain {
		v.Decision, v.Rule, v.Inside = Deny, r, text
		v.Reason = fmt.Sprintf("runs `%s` from its arguments, which matches a deny rule", text)
		return v
	} else if r != nil {
		argDeny, argText = r, text
	} else if why != "" {
		floors = append(floors, limit{why: why})
	}
	if p.network {
		floors = dropNetwork(floors)
	}
	if layer != layerNone {
		// Under the run-time layer: what it decides as it happens
		// limits nothing here.
		left := func(ls []limit) []limit {
			out := ls[:0:0]
			for _, l := range ls {
				if l.layer == layerExec || l.layer == layerWrite && confined {
					v.Layered = true
					continue
				}
				out = append(out, l)
			}
			return out
		}
		floors, blocks, defaults = left(floors), left(blocks), left(defaults)
	}
	if bare {
		switch {
		case len(floors) > 0:
			v.Decision, v.Reason, v.Fact = Ask, floors[0].why, floors[0].fact
		case len(defaults) > 0:
			v.Decision, v.Reason, v.Fact = Default, defaults[0].why, defaults[0].fact
		case len(sets) > 0 && layer != layerNone:
			// What the variables change of the programs that follow is
			// decided as each runs (the loader's variables too).
			v.Decision, v.Layered = Allow, true
			v.Reason = fmt.Sprintf("sets %s for the commands that follow, each decided as it runs", strings.Join(sets, ", "))
		case len(sets) > 0:
			v.Decision = Default
			v.Reason = fmt.Sprintf("sets %s for the commands that follow", strings.Join(sets, ", "))
		default:
			v.Decision, v.Reason = Allow, "runs no program"
		}
		return v
	}

	var ask, allow, maybeDeny, maybe *Rule
	var allows []*Rule
	prog := tbl.Program(c.prog)
	scan := func(rules []*Rule) *Rule {
		for _, r := range rules {
			if !p.noIndex && !c.mayLead(r, prog) {
				continue // not compiled: it cannot match (see leadWord)
			}
			if err := r.compile(tbl); err != nil {
				if !errors.Is(err, errNotCommand) && r.Decision != Allow {
					floors = append(floors, limit{why: fmt.Sprintf("rule %q cannot be read: %v", r.Text, err), unreadable: true})
				}
				continue
			}
			s := r.match(c, cmd, p.home)
			if s == none {
				continue
			}
			switch r.Decision {
			case Deny:
				if s == definite {
					return r
				}
				if maybeDeny == nil {
					maybeDeny = r
				}
			case Ask:
				if ask == nil {
					ask = r
				}
			case Allow:
				if s == definite {
					allows = append(allows, r)
				} else if s == possible && maybe == nil {
					maybe = r
				}
			}
		}
		return nil
	}
	progRules, globalRules, err := p.rulesFor(c, cmd)
	if err != nil {
		floors = append(floors, limit{why: fmt.Sprintf("the policy cannot be read: %v", err), unreadable: true})
	}
	if r := scan(progRules); r != nil {
		return deny(v, r)
	}
	if r := scan(globalRules); r != nil {
		return deny(v, r)
	}
	// An allow rule that names a flag accepts what the table says the
	// flag does: `sed -i` allows sed -i, `sed` does not. The rule that
	// accepts the most decides.
	for _, r := range allows {
		f, b, d := waive(floors, r), waive(blocks, r), waive(defaults, r)
		if allow == nil || len(f)+len(b)+len(d) < len(floors)+len(blocks)+len(defaults) {
			allow, floors, blocks, defaults = r, f, b, d
		}
	}
	if r, err := p.globDeny(cmd, depth); r != nil {
		return deny(v, r)
	} else if err != nil {
		floors = append(floors, limit{why: fmt.Sprintf("the policy cannot be read: %v", err), unreadable: true})
	}
	switch {
	case argDeny != nil:
		// A reading of the arguments of a program nobody described
		// is denied: a person decides.
		v.Decision, v.Rule, v.Inside = Ask, argDeny, argText
		v.Reason = fmt.Sprintf("its arguments may run `%s`, which matches a deny rule", argText)
	case maybeDeny != nil:
		v.Decision, v.Rule = Ask, maybeDeny
		v.Reason = "may match a deny rule: a word or the working directory is not known statically"
	case ask != nil:
		v.Decision, v.Rule = Ask, ask
		v.Reason = "matches an ask rule"
	case allow == nil && maybe != nil:
		v.Decision, v.Rule = Ask, maybe
		v.Reason = "which rule applies depends on a word not known statically"
		v.Floor = v.Reason
	case allow != nil && len(floors)+len(blocks) > 0:
		first := append(floors, blocks...)[0]
		v.Decision, v.Rule, v.Fact, v.Floor = Ask, allow, first.fact, first.why
		v.Reason = "matches an allow rule, but " + first.why
	case allow != nil && len(defaults) > 0:
		v.Decision, v.Rule, v.Fact, v.Floor = Default, allow, defaults[0].fact, defaults[0].why
		v.Reason = "matches an allow rule, but " + defaults[0].why
	case allow != nil:
		v.Decision, v.Rule = Allow, allow
		v.Reason = "matches an allow rule"
	case len(floors) > 0:
		v.Decision, v.Reason, v.Fact = Ask, floors[0].why, floors[0].fact
	case len(blocks) == 0 && len(defaults) == 0 && harmless(c, cmd):
		v.Decision, v.Reason = Allow, "a harmless shell builtin"
	case len(defaults) > 0 && len(blocks) == 0:
		v.Decision, v.Reason, v.Fact = Default, defaults[0].why, defaults[0].fact
	default:
		v.Decision, v.Reason, v.Unmatched = Default, "no rule matches", len(blocks) == 0 && len(defaults) == 0
	}
	if v.Decision == Ask {
		for _, ls := range [][]limit{floors, blocks} {
			for _, l := range ls {
				v.Unreadable = v.Unreadable || l.unreadable
				if l.network && v.Network == "" {
					v.Network = l.why
				}
			}
		}
	}
	return v
}

// globalFor returns the rules that may match any program, and the regex
// grants whose key is a token of the command's texts (see index.go), in
// the order they were added: what scanning every regex grant would find.
func (p *Policy) globalFor(c *call, cmd *shellparse.Command) []*Rule {
	if len(p.byKey) == 0 {
		return p.global
	}
	var found []*Rule
	for _, k := range commandKeys(c, assignTexts(cmd)) {
		found = append(found, p.byKey[k]...)
	}
	if len(found) == 0 {
		return p.global
	}
	out := make([]*Rule, 0, len(p.global)+len(found))
	out = append(append(out, p.global...), found...)
	slices.SortFunc(out, func(a, b *Rule) int { return a.seq - b.seq })
	return out
}

// assignTexts returns cmd's assignments as regex grants see them.
func assignTexts(cmd *shellparse.Command) []string {
	var assigns []string
	for _, a := range cmd.Assigns {
		assigns = append(assigns, a.Name+"="+quote(a.Value.Text))
	}
	return assigns
}

// globDeny decides a command whose program is a pattern (/usr/bin/r[m])
// as each program with rules that the pattern matches: a deny for any of
// them is a deny.
func (p *Policy) globDeny(cmd *shellparse.Command, depth int) (*Rule, error) {
	if len(cmd.Args) == 0 || !cmd.Args[0].Glob || depth > 0 {
		return nil, nil
	}
	pat := strings.ToLower(path.Base(cmd.Args[0].Text))
	names, err := p.programNames()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if ok, _ := path.Match(pat, name); !ok || name == pat {
			continue
		}
		cp := *cmd
		cp.Args = append([]shellparse.Word{{Text: name, Static: true}}, cmd.Args[1:]...)
		if v := p.decideCommand(&cp, depth+1); v.Decision == Deny {
			return v.Rule, nil
		}
	}
	return nil, nil
}

// waive drops the limits an allow rule accepts by naming their flag.
func waive(limits []limit, allow *Rule) []limit {
	if allow.c == nil || len(allow.c.flags) == 0 && !slices.ContainsFunc(limits, func(l limit) bool { return l.key != "" }) {
		return limits
	}
	out := limits[:0:0]
	for _, l := range limits {
		named := l.key != "" && allow.c.names(l.key)
		for _, f := range l.flags {
			if slices.Contains(allow.c.flags, f) {
				named = true
			}
		}
		if !named {
			out = append(out, l)
		}
	}
	return out
}

// dropNetwork returns limits without those about reaching other machines.
func dropNetwork(limits []limit) []limit {
	if !slices.ContainsFunc(limits, func(l limit) bool { return l.network }) {
		return limits
	}
	return slices.DeleteFunc(slices.Clone(limits), func(l limit) bool { return l.network })
}

// decideNested decides a command line found inside an option's value.
// byPath is the first program it runs by a path outside the system
// directories, "" if none.
func (p *Policy) decideNested(script string, depth int) (d Decision, why string, r *Rule, byPath string, unreadable, network bool) {
	if depth+1 > maxNested {
		return Ask, "is nested too deep to read", nil, "", false, false
	}
	s, err := shellparse.Parse(script)
	if err != nil {
		return Ask, "does not parse", nil, "", false, false
	}
	res := p.decideScript(s, depth+1)
	if res.Decision == Deny {
		for _, v := range res.Commands {
			if v.Decision == Deny {
				return Deny, "matches a deny rule", v.Rule, "", false, false
			}
		}
	}
	for _, v := range res.Commands {
		unreadable = unreadable || v.Unreadable
		network = network || v.Network != ""
		if prog := v.Command.Program(); byPath == "" && strings.ContainsAny(prog, `/\`) && !systemDirs[path.Dir(prog)] {
			byPath = prog
		}
	}
	return res.Decision, res.Reason, nil, byPath, unreadable, network
}

func deny(v Verdict, r *Rule) Verdict {
	v.Decision, v.Rule = Deny, r
	v.Reason = "matches a deny rule"
	return v
}

// Explain is the verdict's reason with the rule that decided, if any.
func (v Verdict) Explain() string {
	if v.Rule == nil {
		return v.Reason
	}
	return v.Reason + ": " + ruleName(v.Rule)
}

func ruleName(r *Rule) string {
	s := "`" + r.Text + "`"
	if src := r.Source.String(); src != "" {
		s += " (" + src + ")"
	}
	return s
}

func hasLower(s string) bool {
	for _, r := range s {
		if unicode.IsLower(r) {
			return true
		}
	}
	return false
}

// foreignDir returns why cmd runs code of another directory, "" when it
// does not: git in a directory outside the scope reads that repository's
// configuration (pager, hooks, fsmonitor), make its Makefile, go test its
// module (see SetScope).
func (p *Policy) foreignDir(c *call, cmd *shellparse.Command) string {
	if !cmd.Moved && !cmd.DirUnknown && len(c.gitDirs) == 0 || c.prog != "git" && (c.block == nil || len(c.block.Reads()) == 0) {
		// The directory the line starts in is the caller's (the gate's
		// scope, or a process's at run time): only where the line moves
		// to is judged here.
		return ""
	}
	if cmd.DirUnknown {
		return fmt.Sprintf("%s runs in a directory not known statically, whose code or configuration runs", c.prog)
	}
	if cmd.Moved && cmd.Dir != "" && !p.inside(cmd.Dir) {
		return fmt.Sprintf("%s runs in %s, outside the project: its code or configuration runs", c.prog, cmd.Dir)
	}
	for _, g := range c.gitDirs {
		d := g.dir
		if cmd.Moved && cmd.Dir != "" && !strings.HasPrefix(d, "/") && !strings.HasPrefix(d, "~") {
			d = path.Join(cmd.Dir, d)
		}
		if !p.inside(d) {
			return fmt.Sprintf("git %s %s: another repository's configuration and hooks run", g.how, g.dir)
		}
	}
	return ""
}

// inside reports whether a directory (absolute, ~/…, or relative to where
// the line starts) is inside the project: see SetScope.
func (p *Policy) inside(d string) bool {
	switch {
	case strings.HasPrefix(d, "~") && (d == "~" || strings.HasPrefix(d, "~/")) && p.home != "":
		d = path.Join(p.home, d[1:])
	case strings.HasPrefix(d, "~"):
		return false
	case !strings.HasPrefix(d, "/"):
		return inTree(d)
	}
	return p.inScope != nil && p.inScope(path.Clean(d))
}

// secrets are the files whose contents are credentials, which no allow
// rule lets a command read unasked: the key earlier versions of the shim
// signed its tickets with (one left on disk stays a secret) and private
// keys. ~ is the home
// directory, however the word spells it ($HOME, ${HOME}, the path); a
// pattern without a leading / or ~ matches at the end of any path.
var secrets = []string{
	"agent-shim/cache.key",
	"~/.ssh/id_*", "/etc/ssh/ssh_host_*_key",
	"~/.gnupg/private-keys-v1.d/*", "~/.gnupg/secring.gpg",
	"~/.aws/credentials", "~/.netrc", "~/.git-credentials", "~/.config/gh/hosts.yml",
	"~/.docker/config.json", "~/.kube/config",
}

// secret returns the first word or read redirection of cmd that names a
// secret file, "" when none does. Words not known statically are read as
// written, with quotes dropped: "$XDG_STATE_HOME/agent-shim/cache.key"
// names the key wherever the variable points.
func (p *Policy) secret(cmd *shellparse.Command) string {
	check := func(w shellparse.Word) bool {
		t := w.Text
		if !w.Static {
			t = strings.NewReplacer(`"`, "", `'`, "", "${HOME}", "~", "$HOME", "~").Replace(homeExpansions(t))
		}
		if p.home != "" && (t == p.home || strings.HasPrefix(t, p.home+"/")) {
			t = "~" + t[len(p.home):]
		}
		if !strings.Contains(t, "/") {
			return false
		}
		t = path.Clean(t)
		for _, s := range secrets {
			if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
				if ok, _ := path.Match(s, t); ok && !strings.HasSuffix(t, ".pub") {
					return true
				}
				continue
			}
			if t == s || strings.HasSuffix(t, "/"+s) {
				return true
			}
		}
		return false
	}
	for i, w := range cmd.Args {
		if i == 0 {
			continue
		}
		if check(w) {
			return w.Text
		}
		if _, v, ok := strings.Cut(w.Text, "="); ok && check(shellparse.Word{Text: v, Static: w.Static}) {
			return w.Text // --key-file=~/.ssh/id_rsa, if=~/.ssh/id_rsa
		}
	}
	for _, r := range cmd.Redirs {
		if r.Kind != shellparse.Write && check(r.Target) {
			return r.Target.Text
		}
	}
	return ""
}
