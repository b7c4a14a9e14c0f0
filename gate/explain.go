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
	// Mode and Level are the gate's.
	Mode  Mode
	Level Level
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
// command needs a person.
var selfPrograms = map[string]bool{"agent-shim": true, "agents-setup": true}

func (g *Gate) explain(t toolID, command string) Explanation {
	tool := t.name
	x := Explanation{Line: command, Tool: tool, Mode: g.mode, Level: g.level}
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
		x.Commands = append(x.Commands, g.decideCommand(t, cmd, approved, &ls))
	}
	d := Decision{Verdict: Allow, Reason: "runs nothing", Covers: &Approval{Tool: tool, Key: command, Writes: ls.writes, Writable: ls.writable}}
	var progs []string
	for i, ce := range x.Commands {
		d.Approved = d.Approved || ce.approved
		d.BySession = d.BySession || ce.bySession
		if ce.Command != nil && len(ce.Command.Args) > 0 {
			d.Covers.Commands = append(d.Covers.Commands, ce.Command.Args)
		}
		d.Covers.Privileged = d.Covers.Privileged || privileged(ce.Command)
		prog := ce.Command.Name()
		if ce.Verdict != Allow && ce.Verdict != Deny && prog != "" && !slices.Contains(progs, prog) {
			progs = append(progs, prog)
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
	if d.Verdict == Ask || d.Verdict == Default {
		slices.Sort(progs)
		d.Request = request(d.Reason, progs)
	}
	x.Decision = d
	return x
}

// decideCommand decides one command of a line. approved reports that the
// person approved this exact line (for the session, or always).
func (g *Gate) decideCommand(t toolID, cmd *shellparse.Command, approved bool, ls *lineState) CommandExplanation {
	ce := CommandExplanation{Command: cmd}
	// Writes inside the scope are the file writes the level allows.
	stripped := cmd
	if g.level >= LevelLocalChanges && len(cmd.Redirs) > 0 {
		c := *cmd
		c.Redirs = nil
		for _, r := range cmd.Redirs {
			if r.Kind == shellparse.Write && r.Target.Static {
				a := g.targetAbs(cmd, r.Target.Text, ls)
				if real, ok := ls.resolve(g.scope, a); a != "" && ok && g.scope.containsResolved(real) {
					ce.InScope = append(ce.InScope, r.Target.Text)
					continue
				}
			}
			c.Redirs = append(c.Redirs, r)
		}
		stripped = &c
	}
	mv := g.policy.DecideCommand(stripped)
	ce.Argv, ce.Matcher, ce.Rule, ce.Fact = mv.Argv, mv.Decision, mv.Rule, mv.Fact
	// Judged for every command, in order: what a command links or
	// moves into place changes the writes of the commands after it.
	guard := g.guardWrites(cmd, mv.Argv, ls)
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
	case approved:
		ce.approved = true
		return set(Allow, "approved")
	case guard != "":
		// The policy's own files: a person decides, in every mode,
		// whatever rules and patterns allow.
		return set(Ask, guard)
	case len(mv.Argv) > 0 && selfPrograms[filepath.Base(mv.Argv[0])]:
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
	lift := func() bool { return cmd.Static() && g.allowAll().DecideCommand(stripped).Decision == matcher.Allow }
	prog := cmd.Name()
	switch {
	case g.sessionProgram(prog) && lift():
		ce.bySession = true
		return set(Allow, "program "+prog+" approved for the session")
	case tv == toolAllow && lift():
		return set(Allow, "tool pattern allows `"+key+"`")
	case mv.Decision == matcher.Ask:
		ce.Verdict, ce.Reason, ce.Decider, ce.Floor = Ask, mv.Explain(), mv.Rule, mv.Floor
	default:
		ce.Verdict, ce.Reason = Default, mv.Explain()
		if g.level == LevelFullAccess {
			return set(Allow, "no rule matches; full access")
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
func (g *Gate) guardWrites(cmd *shellparse.Command, argv []string, ls *lineState) string {
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
	reason, protected := "", false
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
	return reason
}
