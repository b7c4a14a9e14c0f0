package manifest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/internal/config"
)

// This file is the one policy builder: agents-setup's apply writes what
// Build returns into config.json, and the policy tests (package
// policycheck) decide with a gate read from the same config, so that a
// test passes only when the hook, reading what apply wrote, decides alike.

// Expansion turns a manifest line into the agent's grants: Grants for the
// allow and ask lists, DenyGrants (broader spellings) for the deny list.
// *Expander is one; a caller that builds several profiles may memoize.
type Expansion interface {
	Grants(line string) ([]string, error)
	DenyGrants(line string) ([]string, error)
}

// The lists of a profile, in the order of config.Grants.
const (
	ListAllow = iota
	ListAsk
	ListDeny
)

// ListNames are the names of the lists, as agents-setup's flags spell them.
var ListNames = [3]string{"allow", "ask", "deny"}

// An AdhocError is an ad-hoc rule (a line of no file: -a/-k/-d) whose
// grants cannot be made.
type AdhocError struct {
	List int // ListAllow, ListAsk or ListDeny
	Text string
	Err  error
}

func (e *AdhocError) Error() string {
	return fmt.Sprintf("--%s %q: %v", ListNames[e.List], e.Text, e.Err)
}

func (e *AdhocError) Unwrap() error { return e.Err }

// Build places the manifest lines under profile ("" places none: only the
// ad-hoc ones) and the ad-hoc lines in the lists to names (one per line),
// and returns the agent's grants and the shim's rules (one per placed
// line, with its grants and where it came from). A grant in two lists
// stays in the strictest only, and so does a line: the same line in a
// stricter list takes its grants out of a weaker one, though the deny
// list spells them otherwise.
func Build(x Expansion, lines, adhoc []Line, to []int, profile string) (config.Grants, []config.Rule, error) {
	var target config.Grants
	rules := []config.Rule{}
	listOf := map[string]int{}
	if profile != "" {
		allow, ask, deny, err := Lists(profile)
		if err != nil {
			return target, nil, err
		}
		for li, cats := range [3][]string{allow, ask, deny} {
			for _, c := range cats {
				listOf[c] = li
			}
		}
	}
	t := [3]*[]string{&target.Allow, &target.Ask, &target.Deny}
	seen := [3]map[string]bool{{}, {}, {}}
	seenLine := [3]map[string]bool{{}, {}, {}}
	lineOf := [3]map[string]string{{}, {}, {}}
	add := func(l Line, li int) error {
		// The deny list's grants are the broad ones: the agent's own
		// matching then denies `git push --force; echo`, `sudo git push
		// --force` and the like too, as the shim does.
		expand := x.Grants
		if li == ListDeny {
			expand = x.DenyGrants
		}
		grants, err := expand(l.Text)
		if err != nil {
			if l.File == "" {
				return &AdhocError{List: li, Text: l.Text, Err: err}
			}
			return fmt.Errorf("%s:%d: %w", l.File, l.Num, err)
		}
		if len(grants) == 0 {
			return nil
		}
		seenLine[li][l.Text] = true
		for _, g := range grants {
			if !seen[li][g] {
				seen[li][g] = true
				lineOf[li][g] = l.Text
				*t[li] = append(*t[li], g)
			}
		}
		rules = append(rules, config.Rule{
			Line: l.Text, Category: l.Category,
			Source: config.Source{Overlay: l.Overlay, File: l.File, Line: l.Num},
			Grants: grants,
		})
		return nil
	}
	for _, l := range lines {
		li, ok := listOf[l.Category]
		if !ok {
			continue // the profile leaves this category to the agent's default
		}
		if err := add(l, li); err != nil {
			return target, nil, err
		}
	}
	if len(to) != len(adhoc) {
		return target, nil, errors.New("building the policy: a list for each ad-hoc line")
	}
	for i, l := range adhoc {
		if err := add(l, to[i]); err != nil {
			return target, nil, err
		}
	}
	target.Allow = slices.DeleteFunc(target.Allow, func(g string) bool {
		return seen[ListAsk][g] || seen[ListDeny][g] || seenLine[ListAsk][lineOf[ListAllow][g]] || seenLine[ListDeny][lineOf[ListAllow][g]]
	})
	target.Ask = slices.DeleteFunc(target.Ask, func(g string) bool {
		return seen[ListDeny][g] || seenLine[ListDeny][lineOf[ListAsk][g]]
	})
	return target, rules, nil
}

// ProgramFiles returns the overlays' program facts as config.json's
// agentShim.programs keeps them, for the shim to decide with.
func (t *Tree) ProgramFiles() []config.ProgramFile {
	var out []config.ProgramFile
	for _, pf := range t.Programs {
		out = append(out, config.ProgramFile{File: pf.Name, Text: string(pf.Data)})
	}
	return out
}

// Config returns the config.json that agents-setup would write from this
// tree alone under profile, on an empty file: the grants and rules of
// Build (manifest lines only) and the program facts. Policy tests decide
// with a gate read from it, as the hook reads the file apply wrote.
func (t *Tree) Config(x Expansion, profile string) (*config.File, error) {
	grants, rules, err := Build(x, t.Lines, nil, nil, profile)
	if err != nil {
		return nil, err
	}
	f := &config.File{Path: "the policy of " + t.Root, Exists: true, Grants: grants}
	f.Shim.Version = config.Version
	f.Shim.Profile = profile
	f.Shim.Rules = rules
	f.Shim.Programs = t.ProgramFiles()
	return f, nil
}
