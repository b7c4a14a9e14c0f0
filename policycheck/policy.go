// Package policycheck checks a checkout's permission manifests before they
// are applied: policy tests (each overlay's .agents/config/tests.txt) run
// against the policy each profile would give, with the same engine that
// decides in hook and shell mode, and lint finds rules that allow more
// than they seem to, rules that can never apply, duplicates, typos and
// deny rules that miss common spellings.
package policycheck

import (
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/manifest"
	"github.com/agent-shim/agent-shim/matcher"
)

// Policy returns the command policy that agents-setup would write into
// config.json for lines under profile, as agent-shim reads it back: each
// manifest line expanded to its grants, placed in the allow, ask or deny
// list of its category (a grant in two lists stays in the strictest), and
// the grants of each line matched by the line (matcher.FromGrants).
//
// It mirrors cmd/agents-setup's buildTarget; when that moves into a
// package, call it instead.
func Policy(lines []manifest.Line, profile string) (*matcher.Policy, error) {
	return policy(lines, profile, manifest.Grants)
}

func policy(lines []manifest.Line, profile string, grantsOf func(string) ([]string, error)) (*matcher.Policy, error) {
	allowCats, askCats, denyCats, err := manifest.Lists(profile)
	if err != nil {
		return nil, err
	}
	listOf := map[string]int{}
	for li, cats := range [3][]string{allowCats, askCats, denyCats} {
		for _, c := range cats {
			listOf[c] = li
		}
	}
	var lists [3][]string
	seen := [3]map[string]bool{{}, {}, {}}
	var managed []matcher.Managed
	for _, l := range lines {
		li, ok := listOf[l.Category]
		if !ok {
			continue // the profile leaves this category to the default
		}
		grants, err := grantsOf(l.Text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", l.File, l.Num, err)
		}
		if len(grants) == 0 {
			continue
		}
		for _, g := range grants {
			if !seen[li][g] {
				seen[li][g] = true
				lists[li] = append(lists[li], g)
			}
		}
		managed = append(managed, matcher.Managed{
			Line:   l.Text,
			Source: matcher.Source{Category: l.Category, Overlay: l.Overlay, File: l.File, Line: l.Num},
			Grants: grants,
		})
	}
	lists[0] = slices.DeleteFunc(lists[0], func(g string) bool { return seen[1][g] || seen[2][g] })
	lists[1] = slices.DeleteFunc(lists[1], func(g string) bool { return seen[2][g] })
	p := matcher.FromGrants(lists[0], lists[1], lists[2], managed)
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// Gate returns the gate hook and shell mode would build for the policy of
// lines under profile, in a checkout at root: ask mode (the default), the
// profile's level, the built-in never-allow list, and the checkout as the
// scope and the working directory.
func Gate(lines []manifest.Line, profile, root string) (*gate.Gate, error) {
	return gateOf(lines, profile, root, manifest.Grants)
}

func gateOf(lines []manifest.Line, profile, root string, grantsOf func(string) ([]string, error)) (*gate.Gate, error) {
	p, err := policy(lines, profile, grantsOf)
	if err != nil {
		return nil, err
	}
	level, err := gate.LevelOf(profile)
	if err != nil {
		return nil, err
	}
	return gate.New(gate.Options{Level: level, Policy: p, Scope: gate.NewScope(root), Dir: root}), nil
}

// engine builds the gates of several profiles over one set of lines,
// expanding each line's grants once.
type engine struct {
	lines  []manifest.Line
	root   string
	gates  map[string]*gate.Gate
	grants map[string][]string
}

func newEngine(lines []manifest.Line, root string) *engine {
	return &engine{lines: lines, root: root, gates: map[string]*gate.Gate{}, grants: map[string][]string{}}
}

func (e *engine) grantsOf(line string) ([]string, error) {
	if g, ok := e.grants[line]; ok {
		return g, nil
	}
	g, err := manifest.Grants(line)
	if err == nil {
		e.grants[line] = g
	}
	return g, err
}

func (e *engine) gate(profile string) (*gate.Gate, error) {
	if g := e.gates[profile]; g != nil {
		return g, nil
	}
	g, err := gateOf(e.lines, profile, e.root, e.grantsOf)
	if err != nil {
		return nil, err
	}
	e.gates[profile] = g
	return g, nil
}
