// Package policycheck checks a checkout's permission manifests before they
// are applied: policy tests (each overlay's .agents/config/tests.txt) run
// against the policy each profile would give, with the same engine that
// decides in hook and shell mode, and lint finds rules that allow more
// than they seem to, rules that can never apply, duplicates, typos and
// deny rules that miss common spellings.
package policycheck

import (
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/manifest"
)

// Gate returns the gate hook and shell mode would build from the
// config.json agents-setup writes for tree under profile: the same
// builder (manifest.Build, the overlays' program facts included) and the
// same reader (gate.Parse, as gate.Load reads the file), in ask mode
// with the profile's level, the built-in never-allow list, and the
// checkout as the scope and the working directory.
func Gate(tree *manifest.Tree, profile string) (*gate.Gate, error) {
	return newEngine(tree).gate(profile)
}

// engine builds the gates of several profiles over one tree, expanding
// each line's grants once.
type engine struct {
	tree  *manifest.Tree
	x     manifest.Expansion
	err   error // reading the tree's program facts
	gates map[string]*gate.Gate
}

func newEngine(tree *manifest.Tree) *engine {
	e := &engine{tree: tree, gates: map[string]*gate.Gate{}}
	tbl, err := tree.Table()
	if err != nil {
		e.err = err
		return e
	}
	e.x = &memo{x: manifest.NewExpander(tbl), grants: map[string][]string{}, deny: map[string][]string{}}
	return e
}

func (e *engine) gate(profile string) (*gate.Gate, error) {
	if e.err != nil {
		return nil, e.err
	}
	if g := e.gates[profile]; g != nil {
		return g, nil
	}
	f, err := e.tree.Config(e.x, profile)
	if err != nil {
		return nil, err
	}
	data, err := f.Marshal()
	if err != nil {
		return nil, err
	}
	g, err := gate.Parse(f.Path, data, gate.Options{Scope: gate.NewScope(e.tree.Root), Dir: e.tree.Root})
	if err != nil {
		return nil, err
	}
	e.gates[profile] = g
	return g, nil
}

// memo is an Expansion that expands each line once.
type memo struct {
	x            *manifest.Expander
	grants, deny map[string][]string
}

func (m *memo) Grants(line string) ([]string, error) { return m.once(m.grants, m.x.Grants, line) }

func (m *memo) DenyGrants(line string) ([]string, error) { return m.once(m.deny, m.x.DenyGrants, line) }

func (m *memo) once(seen map[string][]string, f func(string) ([]string, error), line string) ([]string, error) {
	if g, ok := seen[line]; ok {
		return g, nil
	}
	g, err := f(line)
	if err == nil {
		seen[line] = g
	}
	return g, err
}
