package matcher

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/shellparse"
)

// A policy read from a store.
//
// A decision reads few of a policy's rules: those of the programs it
// meets, and of those only the ones whose subcommand is the command's
// (see mayLead), plus the regex grants keyed by a word of the command
// (see index.go) and the few rules that may match anything. A policy
// with thousands of rules need not be read whole before every command:
// its rules are filed in sections by the name a decision looks them up
// by, a store (the shim's compact policy copy) keeps the sections, and a
// policy made with Open reads a section the first time a decision needs
// it. What a decision finds is what the whole policy would give.
//
// A rule's section is named by where a decision looks for it:
//   - a rule about one program: the program, or "program lead" when the
//     rule has a lead word (push of `git push --force`), or "program lead
//     lead2" when it has two (see leadWords); the section one word
//     shorter then lists the last word in its Leads, even when it holds
//     no rule of its own;
//   - a regex grant with a key (see grantKey): the key; a key and a
//     program of the same spelling share the section;
//   - any other rule: "", read when the policy is opened.

// Stored is a rule as a store keeps it.
type Stored struct {
	Decision Decision
	Text     string
	Source   Source
	Key      string // grantKey of a regex grant
	Seq      int    // position in the policy's rules
}

// Section is the rules filed under one name, in the policy's order.
type Section struct {
	Name    string
	Program bool     // Name is a program's (see Store.Programs)
	Leads   []string // for a program: the leads of its "program lead" sections
	Rules   []Stored
}

// Store yields a policy's sections on demand.
type Store interface {
	// Section returns the section of that name; a name without rules
	// has an empty section.
	Section(name string) (Section, error)
	// Programs returns every program that has a section.
	Programs() ([]string, error)
	// All returns every section.
	All() ([]Section, error)
}

// Sections returns p's rules filed by section (see Store), and the
// number of rules: what a store keeps of p.
func (p *Policy) Sections() ([]Section, int) {
	p.loadAll()
	byName := map[string]*Section{}
	get := func(name string) *Section {
		s := byName[name]
		if s == nil {
			s = &Section{Name: name}
			byName[name] = s
		}
		return s
	}
	for _, r := range p.rules {
		name := sectionOf(r)
		s := get(name)
		s.Rules = append(s.Rules, Stored{Decision: r.Decision, Text: r.Text, Source: r.Source, Key: r.key, Seq: r.seq})
		if program(r.Text) == "" {
			continue
		}
		for {
			i := strings.LastIndexByte(name, ' ')
			if i < 0 {
				get(name).Program = true
				break
			}
			parent := get(name[:i])
			if lead := name[i+1:]; !slices.Contains(parent.Leads, lead) {
				parent.Leads = append(parent.Leads, lead)
			}
			name = name[:i]
		}
	}
	out := make([]Section, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out, len(p.rules)
}

// sectionOf names the section of a rule that was added.
func sectionOf(r *Rule) string {
	prog := program(r.Text)
	switch {
	case prog == "":
		return r.key
	case r.lead2 != "":
		return prog + " " + r.lead + " " + r.lead2
	case r.lead != "":
		return prog + " " + r.lead
	}
	return prog
}

// lazy is the state of a policy read from a store.
type lazy struct {
	mu     sync.Mutex
	store  Store
	loaded map[string]bool
	leads  map[string][]string // program → the leads of its sections
}

// Open returns the policy kept in store, of n rules: its sections are
// read when a decision first needs them, the section "" now. Rules added
// to it follow the stored ones. A section that cannot be read later
// makes the decisions that need it Ask, never Allow.
func Open(store Store, n int) (*Policy, error) {
	p := New()
	p.rules = make([]*Rule, 0, 16)
	p.next = n
	p.lazy = &lazy{store: store, loaded: map[string]bool{}, leads: map[string][]string{}}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	if err := p.need(""); err != nil {
		return nil, err
	}
	return p, nil
}

// need reads the section name once; p.lazy.mu is held.
func (p *Policy) need(name string) error {
	if p.lazy.loaded[name] {
		return nil
	}
	s, err := p.lazy.store.Section(name)
	if err != nil {
		return err
	}
	if s.Name != name {
		return fmt.Errorf("policy store: asked for section %q, got %q", name, s.Name)
	}
	p.lazy.loaded[name] = true
	p.addSection(s)
	return nil
}

// addSection adds a section's rules, keeping each index in the policy's
// order. Index slices are replaced, never changed in place, so that what
// a decision took from an index under the lock stays valid.
func (p *Policy) addSection(s Section) {
	if len(s.Leads) > 0 {
		p.lazy.leads[s.Name] = s.Leads
	}
	var global []*Rule
	progs, keys := map[string][]*Rule{}, map[string][]*Rule{}
	for _, st := range s.Rules {
		r := &Rule{Text: st.Text, Decision: st.Decision, Source: st.Source, seq: st.Seq}
		p.rules = append(p.rules, r)
		if prog := program(r.Text); prog != "" {
			r.lead, r.lead2, _ = leadWords(r.Text)
			progs[prog] = append(progs[prog], r)
			continue
		}
		r.key = st.Key
		if r.key != "" && !p.noIndex {
			keys[r.key] = append(keys[r.key], r)
			continue
		}
		global = append(global, r)
	}
	for prog, rs := range progs {
		p.byProg[prog] = merged(p.byProg[prog], rs)
	}
	if len(keys) > 0 && p.byKey == nil {
		p.byKey = map[string][]*Rule{}
	}
	for k, rs := range keys {
		p.byKey[k] = merged(p.byKey[k], rs)
	}
	if len(global) > 0 {
		p.global = merged(p.global, global)
	}
}

// merged returns a new slice of old's and add's rules in the policy's order.
func merged(old, add []*Rule) []*Rule {
	out := make([]*Rule, 0, len(old)+len(add))
	out = append(append(out, old...), add...)
	slices.SortStableFunc(out, func(a, b *Rule) int { return a.seq - b.seq })
	return out
}

// rulesFor returns the rules a decision about c scans: those of its
// program that may lead it and the regex grants its words key, reading
// their sections first when p is lazy. err is a section that could not
// be read.
func (p *Policy) rulesFor(c *call, cmd *shellparse.Command) (prog, global []*Rule, err error) {
	if p.lazy == nil {
		return p.byProg[c.prog], p.globalFor(c, cmd), nil
	}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	if c.prog != "" {
		err = p.needLeads(c, c.prog)
	}
	for _, k := range commandKeys(c, assignTexts(cmd)) {
		if err != nil {
			break
		}
		err = p.need(k)
	}
	return p.byProg[c.prog], p.globalFor(c, cmd), err
}

// needLeads reads the section name of c's program and, below it, the
// sections of the lead words c may start with: what mayLead may let
// through. p.lazy.mu is held.
func (p *Policy) needLeads(c *call, name string) error {
	if err := p.need(name); err != nil {
		return err
	}
	leads := p.lazy.leads[name]
	if len(leads) == 0 {
		return nil
	}
	c.first()
	depth := strings.Count(name, " ") // 0: leads are first words; 1: second
	var global bool
	if depth == 1 {
		_, global, _ = p.programs().Program(c.prog).Global(name[strings.IndexByte(name, ' ')+1:])
	}
	for _, l := range leads {
		may := global
		if depth == 0 {
			_, may, _ = p.programs().Program(c.prog).Global(l)
		}
		if !may && len(c.leads) > depth {
			t := c.leads[depth]
			may = t.kind != posTok || t.text == l
		}
		if !may {
			continue
		}
		sub := name + " " + l
		if depth == 0 {
			if err := p.needLeads(c, sub); err != nil {
				return err
			}
		} else if err := p.need(sub); err != nil {
			return err
		}
	}
	return nil
}

// programNames returns the programs that have rules: those of the store
// and those added to the policy since.
func (p *Policy) programNames() ([]string, error) {
	if p.lazy == nil {
		return slices.Collect(maps.Keys(p.byProg)), nil
	}
	stored, err := p.lazy.store.Programs()
	if err != nil {
		return nil, err
	}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	names := slices.Clone(stored)
	for name := range p.byProg {
		if !slices.Contains(stored, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// loadAll reads every section of a lazy policy.
func (p *Policy) loadAll() error {
	if p.lazy == nil {
		return nil
	}
	p.lazy.mu.Lock()
	defer p.lazy.mu.Unlock()
	all, err := p.lazy.store.All()
	if err != nil {
		return err
	}
	for _, s := range all {
		if !p.lazy.loaded[s.Name] {
			p.lazy.loaded[s.Name] = true
			p.addSection(s)
		}
	}
	slices.SortStableFunc(p.rules, func(a, b *Rule) int { return a.seq - b.seq })
	return nil
}
