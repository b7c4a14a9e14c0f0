package gate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Explanation is how the gate decides a shell command line: the decision
// itself, exactly what DecideBash returns and hook and shell mode act on,
// and what made it, command by command. `agent-shim explain` prints it.
type Explanation struct {
	Decision
	// Line is the command line, Tool the shell tool it came from.
	Line, Tool string
	// Mode and Level are the gate's; Layer says the line was read as
	// it runs under the run-time layer (Options.Layer).
	Mode  Mode
	Level Level
	Layer bool
	// ParseErr is why the line does not parse; nil when it does.
	ParseErr error
	// Commands holds one entry per command the line would run, in
	// source order.
	Commands []CommandExplanation
}

// CommandExplanation is the gate's decision for one command of a line.
type CommandExplanation struct {
	Command *shellparse.Command
	// Argv is the command as the rules see it: program basename,
	// runners unwrapped, git's global options dropped.
	Argv []string
	// Verdict and Reason are the gate's, the line's verdict being the
	// strongest of its commands'.
	Verdict Verdict
	Reason  string
	// Matcher is the command policy's own verdict, before the gate's
	// mode, level, tool patterns, scope and built-in lists.
	Matcher Verdict
	// Rule is the rule of the command policy that decided, nil if none;
	// its Source says where it came from (file, line, overlay, category;
	// the never-allow list is overlay "builtin").
	Rule *matcher.Rule
	// Decider is the rule whose verdict is the command's, nil when
	// something else decided (a floor, a tool pattern, the mode or
	// level, the person's answer).
	Decider *matcher.Rule
	// Floor is what held the verdict above the Decider's, an allow
	// rule (a write outside the scope, a program fact, …); "" if nothing.
	Floor string
	// NeverAllow is the never-allow rule or shape that applies, "" if none.
	NeverAllow string
	// Protected says which protected path the command writes, or which
	// write target cannot be told; "" if none.
	Protected string
	// Tool is how the tool patterns match the command: "allow",
	// "deny", or "" when none matches.
	Tool string
	// InScope are the write redirections inside the scope, which the
	// level allows.
	InScope []string
	// Fact is the program fact (see package programs) that made the
	// command policy's verdict stricter, "" if none.
	Fact string
	// Layered says the run-time layer decides, as the command runs,
	// what the static reading could not see into (a script, code, a
	// program not known statically, a write it confines): the verdict
	// leaves that to it ("checked as it runs"). Only under the layer.
	Layered bool
	// approved: the person approved the line earlier; bySession: an
	// answer for the session lifted the command's program.
	approved, bySession bool
}

// Explain decides a shell command line, as DecideBash does, and says why.
func (g *Gate) Explain(command string) Explanation { return g.explain(bashTool, command) }

// DecideBash decides a shell command line without prompting.
func (g *Gate) DecideBash(command string) Decision { return g.explain(bashTool, command).Decision }

// allowAll allows every command: deciding a command with it yields Allow
// only when an allow rule could allow it at all, by the built-in program
// table. A gate decides with its own table (see Gate.allowAll). Made on
// first use: most processes never lift a floor.
var allowAll = sync.OnceValue(func() *matcher.Policy { return newAllowAll(nil) })

// newAllowAll returns a policy that allows every command, deciding with
// tbl (nil: the built-in table).
func newAllowAll(tbl *programs.Table) *matcher.Policy {
	p := matcher.New()
	if tbl != nil {
		p.SetPrograms(tbl)
	}
	p.Add(matcher.Allow, "command(*)", matcher.Source{})
	return p
}

// allowAll is the package's allowAll with the gate's program table: the
// floors an overlay's program facts set (an option that runs a command)
// are floors of this gate's lift check too.
func (g *Gate) allowAll() *matcher.Policy {
	g.liftOnce.Do(func() {
		if g.programs == programs.Builtin() {
			g.lift = allowAll()
		} else {
			g.lift = newAllowAll(g.programs)
		}
	})
	return g.lift
}

// lineState is what the commands of a line before the current one did
// that changes how its writes are judged.
type lineState struct {
	cd          bool     // a cd (pushd, popd) ran
	made        []string // paths an earlier command linked, copied or moved into place
	madeUnknown bool     // an earlier command made paths nobody can tell
	resolved    map[string]string
	writes      []string // the protected paths the line writes, as named and resolved
	writable    []string // every path the line writes, as named and resolved
}

// wrote records a write of the protected path a (absolute, as named),
// resolved to real. A `git config` write stands for the configuration of
// the repository the command runs in.
func (ls *lineState) wrote(a, real string, gitConfig bool) {
	a = filepath.Clean(a)
	if gitConfig {
		a = gitConfigOf(filepath.Dir(filepath.Dir(a)))
		real = resolved(a)
	}
	for _, p := range []string{a, real} {
		if p != "" && !slices.Contains(ls.writes, p) {
			ls.writes = append(ls.writes, p)
		}
	}
}

// resolve is the gate's scope's resolve, remembered for the line: the
// scope and the protected paths look at the same targets.
func (ls *lineState) resolve(s *Scope, abs string) (string, bool) {
	if r, ok := ls.resolved[abs]; ok {
		return r, r != ""
	}
	r, ok := s.resolve(abs)
	if ls.resolved == nil {
		ls.resolved = map[string]string{}
	}
	ls.resolved[abs] = r
	return r, ok
}

// linkMakers are programs that can put a link (or a copy of one) where a
// later command writes.
var linkMakers = map[string]bool{
	"ln": true, "link": true, "cp": true, "mv": true, "install": true, "rsync": true,
	"tar": true, "bsdtar": true, "unzip": true, "cpio": true, "gtar": true,
}

// privilegeRunners are the programs that run a command with privileges
// the caller lacks (set-user-ID, or a service that runs it as root).
var privilegeRunners = map[string]bool{"sudo": true, "doas": true, "pkexec": true, "su": true, "run0": true}

// privileged reports whether cmd runs through a privilege runner, or is
// one (sudo -s), by a word of the line.
func privileged(cmd *shellparse.Command) bool {
	if cmd == nil {
		return false
	}
	for _, f := range cmd.Nesting {
		if kind, _, _ := strings.Cut(f.Kind, " "); privilegeRunners[kind] {
			return true
		}
	}
	return len(cmd.Args) > 0 && cmd.Args[0].Static && privilegeRunners[filepath.Base(cmd.Args[0].Text)]
}

// selfPrograms change or judge the policy: running them from an agent's
// command needs a person. agent-shim-bash is the link install makes for
// shell mode, which runs any subcommand too.
var selfPrograms = map[string]bool{"agent-shim": true, "agent-shim-bash": true, "agents-setup": true}

// approvesItself reports whether argv (as the rules see it) runs
// agent-shim's command that approves or revokes a call: a person's, from a
// terminal of their own, never an agent's tool call.
func approvesItself(argv []string) bool {
	if len(argv) < 2 || !selfPrograms[filepath.Base(argv[0])] || filepath.Base(argv[0]) == "agents-setup" {
		return false
	}
	return argv[1] == "approve" || argv[1] == "revoke"
}

func (g *Gate) explain(t toolID, command string) Explanation {
	tool := t.name
	x := Explanation{Line: command, Tool: tool, Mode: g.mode, Level: g.level, Layer: g.layer}
	request := func(reason string, progs []string) *Request {
		return &Request{Kind: KindShell, Tool: tool, Key: command, Reason: reason, Programs: progs,
			Always: Grant{Tool: "bash", Pattern: escapeGlob(command)}}
	}
	approved := g.sessionExact(t, command) || g.tools.exactAllow(t, command)
	lineDeny := !g.tools.empty() && g.tools.match(t, command) == toolDeny
	s, err := shellparse.Parse(command)
	x.ParseErr = err
	switch {
	case lineDeny:
		x.Decision = Decision{Verdict: Deny, Reason: "tool pattern denies `" + command + "`"}
		return x
	case err != nil && approved:
		x.Decision = Decision{Verdict: Allow, Reason: "approved", Approved: true, Covers: &Approval{Tool: tool, Key: command}}
		return x
	case err != nil:
		// Nothing can be checked, not even the never-allow list: a
		// person must read it, in every mode.
		reason := fmt.Sprintf("does not parse: %v", err)
		x.Decision = Decision{Verdict: Ask, Reason: reason, Request: request(reason, nil), Covers: &Approval{Tool: tool, Key: command}}
		return x
	}
	var ls lineState
	x.Commands = make([]CommandExplanation, 0, len(s.Commands))
	for _, cmd := range s.Commands {
		ce := g.decideCommand(t, cmd, approved, &ls, g.reading())
		if ce.Layered && (ce.Verdict == Allow || ce.Verdict == Default) {
			ce.Reason += "; " + CheckedAsItRuns
		}
		x.Commands = append(x.Commands, ce)
	}
	d := Decision{Verdict: Allow, Reason: "runs nothing", Covers: &Approval{Tool: tool, Key: command, Writes: ls.writes, Writable: ls.writable}}
	var progs, cmds []string
	for i, ce := range x.Commands {
		d.Approved = d.Approved || ce.approved
		d.BySession = d.BySession || ce.bySession
		d.Layered = d.Layered || ce.Layered
		if ce.Command != nil && len(ce.Command.Args) > 0 {
			d.Covers.Commands = append(d.Covers.Commands, ce.Command.Args)
		}
		d.Covers.Privileged = d.Covers.Privileged || privileged(ce.Command)
		prog := ce.Command.Name()
		if ce.Verdict != Allow && ce.Verdict != Deny && prog != "" && !slices.Contains(progs, prog) {
			progs = append(progs, prog)
		}
		if ce.Verdict != Allow && ce.Verdict != Deny {
			if c := subcommand(ce.Argv); c != "" && !slices.Contains(cmds, c) {
				cmds = append(cmds, c)
			}
		}
		if i == 0 || Stronger(ce.Verdict, d.Verdict) {
			d.Verdict, d.Reason, d.Rule, d.Floor = ce.Verdict, ce.Reason, ce.Decider, ce.Floor
			if len(x.Commands) > 1 && len(ce.Argv) > 0 {
				d.Reason = strings.Join(ce.Argv, " ") + ": " + ce.Reason
			}
		}
	}
	if d.Verdict != Allow {
		d.Approved, d.BySession = false, false // the policy decided
	}
	if d.Verdict == Deny {
		d.Layered = false
	}
	if d.Verdict == Ask || d.Verdict == Default {
		slices.Sort(progs)
		slices.Sort(cmds)
		d.Request = request(d.Reason, progs)
		d.Request.Commands = cmds
		d.Request.ToolAsks, d.Request.CommandAsks = g.asksLifted(progs, cmds)
	}
	x.Decision = d
	return x
}

// CheckedAsItRuns ends the reason of a command whose verdict leaves to the
// run-time layer what the static reading could not see into
// (Decision.Layered).
const CheckedAsItRuns = "checked as it runs"

// reading is how the gate reads a command: statically (what the line
// shows), or as it runs under the run-time layer.
type reading struct {
	// layer: the command runs under the run-time layer (package
	// supervisor): what the static reading cannot see into is left to
	// it (matcher.Policy.DecideUnderLayer, guardWrites' protected
	// paths only), and a command that runs code the static reading
	// cannot see into (codeOnly) is allowed when no rule decides it.
	layer bool
	// exec: one execution at run time (DecideExecution): no upgrade,
	// since what no rule decides runs there anyway.
	exec bool
}

// reading is the gate's reading of its lines: under the layer when the
// host runs them there (Options.Layer).
func (g *Gate) reading() reading { return reading{layer: g.layer} }

// decideCommand decides one command of a line. approved reports that the
// person approved this exact line (for the session, or always); rd is how
// the command is read.
func (g *Gate) decideCommand(t toolID, cmd *shellparse.Command, approved bool, ls *lineState, rd reading) CommandExplanation {
	ce := CommandExplanation{Command: cmd}
	// Writes inside the scope are the file writes the level allows;
	// under the layer, where it confines writes, so are the temporary
	// directory's (see inTempDir). What one execution writes at run time
	// is the confinement's to decide (below full access; above it,
	// nobody's), whatever the path: only a protected path is asked.
	confined := rd.layer && (g.level < LevelFullAccess || rd.exec)
	stripped := cmd
	if (g.level >= LevelLocalChanges || confined) && len(cmd.Redirs) > 0 {
		c := *cmd
		c.Redirs = nil
		for _, r := range cmd.Redirs {
			if r.Kind == shellparse.Write && r.Target.Static {
				a := g.targetAbs(cmd, r.Target.Text, ls)
				real, ok := ls.resolve(g.scope, a)
				if a != "" && ok && g.level >= LevelLocalChanges && g.scope.containsResolved(real) {
					ce.InScope = append(ce.InScope, r.Target.Text)
					continue
				}
				if a != "" && ok && confined && (rd.exec || inTempDir(real)) {
					ce.InScope = append(ce.InScope, r.Target.Text)
					ce.Layered = true
					continue
				}
			}
			c.Redirs = append(c.Redirs, r)
		}
		stripped = &c
	}
	// Under the layer, but for a command that hands what it runs to a
	// server outside the tree, which the layer does not see (handOffs).
	layer := rd.layer && !handedOff(cmd)
	var mv matcher.Verdict
	if layer {
		mv = g.policy.DecideUnderLayer(stripped, confined)
		ce.Layered = ce.Layered || mv.Layered
	} else {
		mv = g.policy.DecideCommand(stripped)
	}
	ce.Argv, ce.Matcher, ce.Rule, ce.Fact = mv.Argv, mv.Decision, mv.Rule, mv.Fact
	// Judged for every command, in order: what a command links or
	// moves into place changes the writes of the commands after it.
	guard, protected, refused := g.guardWrites(cmd, mv.Argv, ls)
	if layer && !protected && guard != "" {
		// A write whose target the static reading cannot tell: the
		// layer confines it, and what it does to a protected path is
		// undone after the line.
		guard, ce.Layered = "", true
	}
	ce.Protected = guard
	set := func(v Verdict, reason string) CommandExplanation {
		ce.Verdict, ce.Reason = v, reason
		return ce
	}
	// byRule is set for a verdict the matched rule gives.
	byRule := func(v Verdict, reason string) CommandExplanation {
		ce.Decider = mv.Rule
		ce.Floor = mv.Floor
		return set(v, reason)
	}
	if never := neverShape(cmd, mv.Argv, g.programs); never != "" {
		ce.NeverAllow = never
		return set(Deny, never)
	}
	if isNever(mv.Rule) {
		ce.NeverAllow = mv.Rule.Text
		// Deny, or Ask for a word not known statically: a deny may
		// apply, and not even yolo runs it unasked.
		if mv.Decision == matcher.Deny {
			return byRule(Deny, "never allowed: `"+mv.Rule.Text+"`")
		}
		if !approved {
			return byRule(Ask, "may be never allowed (`"+mv.Rule.Text+"`): "+mv.Reason)
		}
	}
	tv, key := toolUnmatched, ""
	if !g.tools.empty() {
		key = strings.Join(cmd.Argv(), " ")
		tv = g.tools.match(t, key)
		if tv != toolDeny && len(mv.Argv) > 0 {
			if norm := strings.Join(mv.Argv, " "); norm != key {
				tv = max(tv, g.tools.match(t, norm))
			}
		}
	}
	if tv != toolUnmatched {
		ce.Tool = tv.String()
	}
	maybeDeny := mv.Decision == matcher.Ask && mv.Rule != nil && mv.Rule.Decision == matcher.Deny
	switch {
	case mv.Decision == matcher.Deny:
		return byRule(Deny, mv.Explain())
	case tv == toolDeny:
		return set(Deny, "tool pattern denies `"+key+"`")
	case refused != "":
		ce.Protected = refused
		return set(Deny, refused)
	case approvesItself(mv.Argv):
		return set(Deny, "never allowed for an agent: runs `"+strings.Join(mv.Argv[:2], " ")+"`, which a person runs, from a terminal of their own (an agent cannot approve itself)")
	case approved:
		ce.approved = true
		return set(Allow, "approved")
	case guard != "":
		// The policy's own files: a person decides, in every mode,
		// whatever rules and patterns allow.
		return set(Ask, guard)
	case len(mv.Argv) > 0 && selfPrograms[filepath.Base(mv.Argv[0])] && !(layer && filepath.Base(mv.Argv[0]) != "agents-setup"):
		// Under the layer agent-shim writes nothing that decides (the
		// state directory and config.json lie outside what the tree may
		// write): its hook, explain and nested shell mode run there.
		return set(Ask, "runs "+filepath.Base(mv.Argv[0])+", which changes or judges the policy")
	case mv.Decision == matcher.Allow:
		return byRule(Allow, mv.Explain())
	case maybeDeny:
		// A deny may apply: not even yolo runs it unasked.
		return byRule(Ask, mv.Explain())
	}
	// A session answer for the program and an allow pattern lift the
	// verdict of no rule or an ask rule, but only for a command an allow
	// rule could allow: static, no floor (a write outside the scope, a
	// program run by path, an environment that changes what runs, …).
	lift := func() bool {
		if layer {
			return g.allowAll().DecideUnderLayer(stripped, confined).Decision == matcher.Allow
		}
		return cmd.Static() && g.allowAll().DecideCommand(stripped).Decision == matcher.Allow
	}
	prog := cmd.Name()
	switch {
	case g.sessionProgram(prog) && lift():
		ce.bySession = true
		return set(Allow, "program "+prog+" approved for the session")
	case len(mv.Argv) > 1 && g.sessionCommand(mv.Argv) && lift():
		ce.bySession = true
		return set(Allow, "`"+strings.Join(mv.Argv[:2], " ")+" …` approved for the session")
	case tv == toolAllow && lift():
		return set(Allow, "tool pattern allows `"+key+"`")
	case mv.Decision == matcher.Ask:
		ce.Verdict, ce.Reason, ce.Decider, ce.Floor = Ask, mv.Explain(), mv.Rule, mv.Floor
	default:
		ce.Verdict, ce.Reason = Default, mv.Explain()
		if g.level == LevelFullAccess {
			return set(Allow, "no rule matches; full access")
		}
		if layer && !rd.exec && mv.Rule == nil && g.codeOnly(cmd, mv) {
			ce.Layered = true
			return set(Allow, "runs "+codeWhat(cmd)+", which the static reading cannot see into")
		}
		if layer && !rd.exec && mv.Unmatched {
			// A program no rule names, with nothing the layer does not
			// decide (network, a server outside the tree, destruction
			// inside the scope): what it runs is decided as it runs and
			// what it writes is confined, as for a script's programs.
			ce.Layered = true
			return set(Allow, "no rule matches")
		}
	}
	if g.mode == ModeYolo && unreadable(cmd) {
		// What runs cannot be read, so the never-allow list cannot be
		// checked.
		return set(Ask, ce.Reason)
	}
	if v := g.needs(ce.Verdict); v == Allow {
		return set(Allow, ce.Reason+"; "+g.mode.String()+" mode")
	}
	return ce
}

// subcommand is a command's program and its subcommand, as the rules see
// argv ("git remote" for git -C x remote -v): the narrower session answer
// (AnswerCommand); "" when the second word is no subcommand (an option,
// a path, a value).
func subcommand(argv []string) string {
	if len(argv) < 2 || !subcommandWord(argv[1]) {
		return ""
	}
	return argv[0] + " " + argv[1]
}

// subcommandWord reports whether w reads as a subcommand (remote,
// run-script, test:unit), not an option, a path or a value.
func subcommandWord(w string) bool {
	if w == "" {
		return false
	}
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':'):
		default:
			return false
		}
	}
	return true
}

// asksLifted returns the ask rules of the policy that a session answer
// for progs (AnswerTool) and for cmds (AnswerCommand) would let through
// unasked: the rules of those programs, by their words (a manifest line,
// or a grant's prefix), sorted. What they approve beyond the call is said
// before the person picks them.
func (g *Gate) asksLifted(progs, cmds []string) (tool, command []string) {
	if len(progs) == 0 && len(cmds) == 0 {
		return nil, nil
	}
	for _, r := range g.policy.Rules() {
		if r.Decision != matcher.Ask {
			continue
		}
		text := r.Text
		if inner, ok := strings.CutPrefix(text, "command("); ok && !strings.HasPrefix(inner, "regex:") {
			text = strings.TrimSuffix(inner, ")")
		}
		words, err := shellparse.Fields(text)
		if err != nil || len(words) == 0 {
			continue
		}
		words[0] = filepath.Base(words[0])
		line := strings.Join(words, " ")
		if slices.Contains(progs, words[0]) && !slices.Contains(tool, line) {
			tool = append(tool, line)
		}
		for _, c := range cmds {
			if cw := strings.Fields(c); len(words) >= len(cw) && slices.Equal(words[:len(cw)], cw) && !slices.Contains(command, line) {
				command = append(command, line)
			}
		}
	}
	slices.Sort(tool)
	slices.Sort(command)
	return tool, command
}

// absIn makes a path of a command absolute: against dir, the directory
// an earlier cd on the line moved to (absolute or ~/…), else against the
// gate's directory. "" when it cannot.
func (g *Gate) absIn(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
		return g.abs(p)
	}
	d := g.abs(dir)
	if d == "" {
		return ""
	}
	return d + "/" + p
}

// targetAbs makes a static write target of cmd absolute; "" when it
// cannot: a relative path after a cd the gate cannot follow.
func (g *Gate) targetAbs(cmd *shellparse.Command, p string, ls *lineState) string {
	if ls.cd && cmd.Dir == "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~") {
		return ""
	}
	return g.absIn(cmd.Dir, p)
}

// guardWrites returns why the writes of cmd need a person in every mode,
// "" when they do not: a write to a protected path, or a write whose
// target cannot be told (not static, after a cd the gate cannot follow,
// or onto a path an earlier command of the line linked or moved into
// place). argv is the command as the rules see it. It records in ls what
// cmd changes for the commands after it.
func (g *Gate) guardWrites(cmd *shellparse.Command, argv []string, ls *lineState) (reason string, protected bool, refused string) {
	type target struct {
		text, how string
		static    bool
	}
	var targets []target
	for _, r := range cmd.Redirs {
		if r.Kind == shellparse.Write {
			how := r.Op // an option or a program: what package shellparse says it writes
			if strings.ContainsAny(r.Op[:min(1, len(r.Op))], "0123456789<>&") {
				how = "redirection " + r.Op
			}
			targets = append(targets, target{r.Target.Text, how, r.Target.Static})
		}
	}
	prog := ""
	if len(argv) > 0 {
		prog = filepath.Base(argv[0])
	}
	wt, unknown := writeTargets(g.programs, argv)
	for _, t := range wt {
		targets = append(targets, target{t, prog, cmd.Static()})
	}
	// The first reason found, but a protected path's over any other.
	note := func(why string, isProtected bool) {
		if reason == "" || isProtected && !protected {
			reason, protected = why, isProtected
		}
	}
	if unknown {
		note(prog+" writes a path not known statically", false)
	}
	var made []string
	for _, t := range targets {
		if !t.static {
			note(fmt.Sprintf("writes %s (%s), a path not known statically", t.text, t.how), false)
			continue
		}
		a := g.targetAbs(cmd, t.text, ls)
		if a == "" {
			note(fmt.Sprintf("writes %s (%s) from a directory the gate cannot tell", t.text, t.how), false)
			continue
		}
		made = append(made, filepath.Clean(a))
		if ls.madeUnknown || slices.ContainsFunc(ls.made, func(m string) bool { return within(filepath.Clean(a), m) }) {
			note(fmt.Sprintf("writes %s (%s), which an earlier command on the line may have made a link", t.text, t.how), false)
		}
		real, ok := ls.resolve(g.scope, a)
		if !ok {
			note(fmt.Sprintf("writes %s (%s), which cannot be resolved (a link loop?)", t.text, t.how), false)
			continue
		}
		for _, p := range []string{filepath.Clean(a), real} {
			if !slices.Contains(ls.writable, p) {
				ls.writable = append(ls.writable, p)
			}
		}
		if why := g.protect.refusedState(a, real); why != "" && refused == "" {
			refused = why
		}
		if why := g.protect.check(a, real); why != "" {
			note(fmt.Sprintf("writes a protected path: %s (%s)", why, t.how), true)
			ls.wrote(a, real, t.how == "git" && t.text == gitConfigFile)
		}
	}
	switch name := cmd.Name(); {
	case name == "cd" || name == "pushd" || name == "popd":
		ls.cd = true
	case linkMakers[prog]:
		ls.made = append(ls.made, made...)
		if unknown || len(made) == 0 || !cmd.Static() {
			ls.madeUnknown = true
		}
	}
	return reason, protected, refused
}
