package gate

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/matcher"
)

// neverText is the never-allow list filed by section, as the compact copy
// files a policy (appendSection, and "program" lines): what
// matcher.(*Policy).Sections gives of the list alone. It is part of the
// binary, generated from neverLines (TestNeverSections holds the two
// together; go test -run TestNeverSections -update ./gate writes it), so
// that a hook call reads the never-allow rules of the programs it meets
// instead of parsing the whole list.
//
//go:embed never.sections
var neverText string

// neverStore is the never-allow list as a matcher.Store.
type neverStore struct {
	count int               // rules
	progs []string          // programs with sections
	text  map[string]string // each section's lines
}

// neverSections returns the never-allow list's store, its text indexed
// by section on first use.
var neverSections = sync.OnceValue(func() neverStore {
	ns := neverStore{text: map[string]string{}}
	// A section's lines are one run of the text (neverSectionsText writes
	// them so): each section is a slice of it, not a copy.
	start, end, cur := 0, 0, ""
	flush := func() {
		if end > start {
			ns.text[cur] += neverText[start:end]
		}
	}
	for off := 0; off < len(neverText); {
		line, _, _ := strings.Cut(neverText[off:], "\n")
		next := off + len(line) + 1
		kind, after, _ := strings.Cut(line, "\t")
		name, _, _ := strings.Cut(after, "\t")
		name, _ = unfield(name)
		switch kind {
		case "rule", "section":
			if kind == "rule" {
				ns.count++
			}
			if name != cur || end != off {
				flush()
				start, cur = off, name
			}
			end = min(next, len(neverText))
		case "program":
			ns.progs = append(ns.progs, name)
		}
		off = next
	}
	flush()
	return ns
})

func (ns neverStore) Section(name string) (matcher.Section, error) {
	secs, err := parseSections(ns.text[name], "", false)
	if err != nil {
		return matcher.Section{}, err
	}
	sec, ok := secs[name]
	if !ok {
		sec = matcher.Section{Name: name}
	}
	sec.Program = slices.Contains(ns.progs, name)
	return sec, nil
}

func (ns neverStore) Programs() ([]string, error) { return ns.progs, nil }

func (ns neverStore) All() ([]matcher.Section, error) {
	secs, err := parseSections(neverText, "", false)
	if err != nil {
		return nil, err
	}
	out := make([]matcher.Section, 0, len(secs))
	for _, s := range secs {
		s.Program = slices.Contains(ns.progs, s.Name)
		out = append(out, s)
	}
	return out, nil
}

// neverSectionsText makes neverText from neverLines.
func neverSectionsText() string {
	p := matcher.New()
	addNever(p)
	secs, _ := p.Sections()
	slices.SortFunc(secs, func(a, b matcher.Section) int { return strings.Compare(a.Name, b.Name) })
	var b []byte
	for _, s := range secs {
		b = appendSection(b, s)
	}
	for _, s := range secs {
		if s.Program {
			b = append(b, "program\t"+field(s.Name)+"\n"...)
		}
	}
	return string(b)
}

// joinStore is a store of a's sections followed by b's, whose rules come
// after a's n.
type joinStore struct {
	a, b matcher.Store
	n    int
}

func (j joinStore) Section(name string) (matcher.Section, error) {
	sa, err := j.a.Section(name)
	if err != nil {
		return sa, err
	}
	sb, err := j.b.Section(name)
	if err != nil {
		return sa, err
	}
	return j.join(sa, sb), nil
}

func (j joinStore) join(sa, sb matcher.Section) matcher.Section {
	sa.Program = sa.Program || sb.Program
	for _, l := range sb.Leads {
		if !slices.Contains(sa.Leads, l) {
			sa.Leads = append(sa.Leads, l)
		}
	}
	for _, r := range sb.Rules {
		r.Seq += j.n
		sa.Rules = append(sa.Rules, r)
	}
	return sa
}

func (j joinStore) Programs() ([]string, error) {
	pa, err := j.a.Programs()
	if err != nil {
		return nil, err
	}
	pb, err := j.b.Programs()
	if err != nil {
		return nil, err
	}
	out := slices.Clone(pa)
	for _, p := range pb {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (j joinStore) All() ([]matcher.Section, error) {
	sa, err := j.a.All()
	if err != nil {
		return nil, err
	}
	sb, err := j.b.All()
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i, s := range sa {
		byName[s.Name] = i
	}
	for _, s := range sb {
		if i, ok := byName[s.Name]; ok {
			sa[i] = j.join(sa[i], s)
			continue
		}
		sa = append(sa, j.join(matcher.Section{Name: s.Name}, s))
	}
	return sa, nil
}
