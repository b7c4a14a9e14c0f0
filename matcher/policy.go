package matcher

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agent-shim/agent-shim/shellparse"
)

// Policy is a set of rules, indexed by the program they apply to. It is safe
// for concurrent use once built.
type Policy struct {
	byProg map[string][]*Rule
	global []*Rule // rules that may match any program (regex, command(*))
	rules  []*Rule // every rule, in the order added
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

func (p *Policy) add(r *Rule) {
	p.rules = append(p.rules, r)
	if prog := program(r.Text); prog != "" {
		p.byProg[prog] = append(p.byProg[prog], r)
	} else {
		p.global = append(p.global, r)
	}
}

// Rules returns every rule in the order added.
func (p *Policy) Rules() []*Rule { return p.rules }

// Clone returns a policy with the same rules, to which more can be added
// without changing p. The rules themselves are shared, compiled once.
func (p *Policy) Clone() *Policy {
	out := &Policy{
		byProg: make(map[string][]*Rule, len(p.byProg)),
		global: slices.Clip(p.global),
		rules:  slices.Clip(p.rules),
	}
	for k, v := range p.byProg {
		out.byProg[k] = slices.Clip(v)
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
	for _, r := range p.rules {
		if err := r.compile(); err != nil && !errors.Is(err, errNotCommand) {
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
}

// Decide parses a command line and decides it.
func (p *Policy) Decide(line string) *Result {
	s, err := shellparse.Parse(line)
	if err != nil {
		return &Result{Decision: Ask, Err: err, Reason: fmt.Sprintf("does not parse: %v", err)}
	}
	return p.DecideScript(s)
}

// DecideScript decides the commands of a parsed line.
func (p *Policy) DecideScript(s *shellparse.Script) *Result {
	res := &Result{Decision: Allow, Reason: "runs nothing", Commands: make([]Verdict, 0, len(s.Commands))}
	first := true
	for _, cmd := range s.Commands {
		v := p.DecideCommand(cmd)
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

// DecideCommand decides one command.
func (p *Policy) DecideCommand(cmd *shellparse.Command) Verdict {
	c := newCall(cmd.Args, cmd.Dir)
	v := Verdict{Command: cmd, Argv: c.argv}
	// floors make the command at least Ask; blocks keep an allow rule
	// from allowing it (Ask), but leave an unmatched command Default.
	floors, blocks := c.floors, c.blocks
	if cmd.Unknown != "" {
		floors = append([]string{cmd.Unknown}, floors...)
	}
	for _, r := range cmd.Redirs {
		if r.Kind == shellparse.Write {
			floors = append(floors, fmt.Sprintf("writes %s (%s)", r.Target.Text, r.Op))
		}
	}
	bare := len(cmd.Args) == 0 || cmd.Decl != ""
	var sets []string
	for _, a := range cmd.Assigns {
		switch {
		case envSafe(a.Name, a.Value.Text, a.Value.Static):
		case bare && hasLower(a.Name):
			// A shell variable, not a program's environment.
		case bare:
			sets = append(sets, a.Name)
		default:
			blocks = append(blocks, fmt.Sprintf("%s= can change what runs", a.Name))
		}
	}
	for _, f := range cmd.Nesting {
		if privileged[f.Kind] {
			blocks = append(blocks, fmt.Sprintf("runs as another user (%s)", f.Kind))
			break
		}
	}
	if bare {
		switch {
		case len(floors) > 0:
			v.Decision, v.Reason = Ask, floors[0]
		case len(sets) > 0:
			v.Decision = Default
			v.Reason = fmt.Sprintf("sets %s for the commands that follow", strings.Join(sets, ", "))
		default:
			v.Decision, v.Reason = Allow, "runs no program"
		}
		return v
	}

	var ask, allow, maybeDeny, maybe *Rule
	scan := func(rules []*Rule) *Rule {
		for _, r := range rules {
			if err := r.compile(); err != nil {
				if !errors.Is(err, errNotCommand) && r.Decision != Allow {
					floors = append(floors, fmt.Sprintf("rule %q cannot be read: %v", r.Text, err))
				}
				continue
			}
			s := r.match(c, cmd)
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
				if s == definite && allow == nil {
					allow = r
				} else if s == possible && maybe == nil {
					maybe = r
				}
			}
		}
		return nil
	}
	if r := scan(p.byProg[c.prog]); r != nil {
		return deny(v, r)
	}
	if r := scan(p.global); r != nil {
		return deny(v, r)
	}
	switch {
	case maybeDeny != nil:
		v.Decision, v.Rule = Ask, maybeDeny
		v.Reason = "may match a deny rule: a word or the working directory is not known statically"
	case ask != nil:
		v.Decision, v.Rule = Ask, ask
		v.Reason = "matches an ask rule"
	case allow == nil && maybe != nil:
		v.Decision, v.Rule = Ask, maybe
		v.Reason = "which rule applies depends on a word not known statically"
	case allow != nil && len(floors)+len(blocks) > 0:
		v.Decision, v.Rule = Ask, allow
		v.Reason = "matches an allow rule, but " + append(floors, blocks...)[0]
	case allow != nil:
		v.Decision, v.Rule = Allow, allow
		v.Reason = "matches an allow rule"
	case len(floors) > 0:
		v.Decision, v.Reason = Ask, floors[0]
	default:
		v.Decision, v.Reason = Default, "no rule matches"
	}
	return v
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
