package matcher

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// memStore keeps a policy's sections in memory and counts what is read.
type memStore struct {
	mu       sync.Mutex
	sections map[string]Section
	programs []string
	read     []string
	fail     *string // a section that cannot be read
}

func newMemStore(p *Policy) (*memStore, int) {
	secs, n := p.Sections()
	s := &memStore{sections: map[string]Section{}}
	for _, sec := range secs {
		s.sections[sec.Name] = sec
	}
	for name := range p.byProg {
		s.programs = append(s.programs, name)
	}
	return s, n
}

func (s *memStore) Section(name string) (Section, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read = append(s.read, name)
	if s.fail != nil && name == *s.fail {
		return Section{}, errors.New("bad section")
	}
	if sec, ok := s.sections[name]; ok {
		return sec, nil
	}
	return Section{Name: name}, nil
}

func (s *memStore) Programs() ([]string, error) { return s.programs, nil }

func (s *memStore) All() ([]Section, error) {
	var out []Section
	for _, sec := range s.sections {
		out = append(out, sec)
	}
	return out, nil
}

// storePolicy is the second corpus's policy with what a store must keep
// apart: rules with and without lead words, keyed and unkeyed regex
// grants, command(*) and grants for other tools, deny rules on both.
func storePolicy() *Policy {
	p := referencePolicy2()
	p.Add(Allow, `command(regex:^tool1\s+sub1(?:\s+\S+)*$)`, Source{})
	p.Add(Deny, `command(regex:^gh\s+repo\s+delete\b.*)`, Source{})
	p.Add(Ask, `command(regex:(?i)danger)`, Source{})
	p.Add(Deny, `command(regex:^\s*kubectl\s+delete\s)`, Source{})
	p.Add(Allow, `command(regex:^broken(\s)`, Source{})
	p.Add(Deny, `command(regex:^alsobroken\s(x)`, Source{})
	p.Add(Allow, "read_file(*)", Source{})
	p.Add(Allow, "git status --short", Source{Category: "read_only"})
	p.Add(Ask, "gh pr create", Source{Category: "external_changes"})
	p.Add(Deny, "git push origin main", Source{Category: "never_allow"})
	p.Add(Allow, "npm run lint", Source{Category: "read_only"})
	return p
}

// TestOpenDecidesAsWhole holds a policy read section by section to the
// decisions of the same policy in memory, for both corpora and lines
// aimed at the sections.
func TestOpenDecidesAsWhole(t *testing.T) {
	whole := storePolicy()
	store, n := newMemStore(whole)
	whole.Add(Deny, "mkfs", Source{Category: "never_allow"})
	var lines []string
	for _, name := range []string{"testdata/adversarial.tsv", "testdata/adversarial-2.tsv"} {
		for _, r := range readCorpus(t, name) {
			lines = append(lines, r.command)
		}
	}
	lines = append(lines,
		"tool1 sub1 a", "tool1 sub2", "gh repo delete x", "echo danger", "DANGER=1 ls",
		"kubectl delete pod x", "broken x", "alsobroken x", "git status --short",
		"git $sub origin main", "git push origin main", "git -C x push origin main",
		"/usr/bin/r[m] -rf /", "/usr/bin/gi? push origin main", "gh pr create", "npm run lint",
		"npm $x lint", "x=git; $x push origin main", "git", "git --version", "env kubectl delete pod x",
		"npm run $x", "gh pr", "gh pr list", "npm -s run lint", "npm run -s lint", "git push -f origin main", "gh pr create --fill",
		"/sbin/mkf[s] /dev/sda", "mkfs /dev/sda")
	for _, line := range lines {
		lazy, err := Open(store, n)
		if err != nil {
			t.Fatal(err)
		}
		// Rules added after opening count as the store's do (the gate
		// adds its never-allow list so).
		lazy.Add(Deny, "mkfs", Source{Category: "never_allow"})
		want, got := whole.Decide(line), lazy.Decide(line)
		if fmt.Sprint(summary(want)) != fmt.Sprint(summary(got)) {
			t.Errorf("%q:\nwhole: %v\nlazy:  %v", line, summary(want), summary(got))
		}
	}
}

func summary(r *Result) []string {
	out := []string{r.Decision.String() + ": " + r.Reason}
	for _, v := range r.Commands {
		out = append(out, v.Decision.String()+" "+v.Explain())
	}
	return out
}

// TestOpenReadsWhatItNeeds: git status reads git's sections, the
// status lead's and the keys of its words, not push's.
func TestOpenReadsWhatItNeeds(t *testing.T) {
	store, n := newMemStore(storePolicy())
	p, err := Open(store, n)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Decide("git status --short"); r.Decision != Allow {
		t.Fatalf("git status --short: %v (%s)", r.Decision, r.Reason)
	}
	if slices.Contains(store.read, "git push") {
		t.Errorf("git status read git push's section: %q", store.read)
	}
	for _, want := range []string{"", "git", "git status"} {
		if !slices.Contains(store.read, want) {
			t.Errorf("git status did not read section %q: %q", want, store.read)
		}
	}
	before := len(store.read)
	p.Decide("git status")
	for _, name := range store.read[before:] {
		if name == "git" || name == "git status" {
			t.Errorf("section %q read twice", name)
		}
	}
}

// TestOpenUnreadableSection: a section that cannot be read makes the
// commands that need it Ask, never Allow, and leaves the others alone.
func TestOpenUnreadableSection(t *testing.T) {
	store, n := newMemStore(storePolicy())
	fail := "git status"
	store.fail = &fail
	p, err := Open(store, n)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Decide("git status"); r.Decision != Ask || !r.Commands[0].Unreadable {
		t.Errorf("git status with its section unreadable: %v (%s)", r.Decision, r.Reason)
	}
	if r := p.Decide("ls"); r.Decision != Allow {
		t.Errorf("ls: %v (%s)", r.Decision, r.Reason)
	}
	if _, err := Open(&memStore{}, 0); err != nil {
		t.Errorf("an empty store: %v", err)
	}
	empty := ""
	if _, err := Open(&memStore{fail: &empty}, 0); err == nil {
		t.Error("a store whose section \"\" cannot be read was opened")
	}
	bad := &memStore{sections: map[string]Section{"": {Name: "other"}}}
	if _, err := Open(bad, 0); err == nil {
		t.Error("a store that answers with another section was accepted")
	}
}

// TestOpenAddAndRules: rules added to an opened policy follow the stored
// ones, and Rules reads the whole store in the policy's order.
func TestOpenAddAndRules(t *testing.T) {
	whole := storePolicy()
	store, n := newMemStore(whole)
	p, err := Open(store, n)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(Deny, "ls -R", Source{})
	if r := p.Decide("ls -R"); r.Decision != Deny {
		t.Errorf("ls -R after Add: %v", r.Decision)
	}
	var want, got []string
	for _, r := range whole.Rules() {
		want = append(want, r.Text)
	}
	for _, r := range p.Rules() {
		got = append(got, r.Text)
	}
	want = append(want, "ls -R")
	if !slices.Equal(want, got) {
		t.Errorf("Rules:\nwant %q\ngot  %q", want, got)
	}
}

// TestOpenConcurrent decides from many goroutines at once (run with -race).
func TestOpenConcurrent(t *testing.T) {
	store, n := newMemStore(storePolicy())
	p, err := Open(store, n)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"git status", "git push -f", "tool1 sub1", "gh pr create", "ls", "npm run lint", "kubectl delete pod x"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				p.Decide(lines[(i+j)%len(lines)])
			}
		}()
	}
	wg.Wait()
}
