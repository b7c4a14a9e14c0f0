// Package replay decides the commands of the decision log again, under
// another policy, each with the function that decided it
// (gate.Redecide), and counts the verdicts that change: a policy change
// reviewed against real history before it lands.
package replay

import (
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/runlayer"
)

// Result is the outcome of replaying a log.
type Result struct {
	Replayed int       `json:"replayed"`
	Skipped  int       `json:"skipped"`
	Damaged  int       `json:"damaged,omitempty"`
	Changes  []Shift   `json:"changes"`
	Commands []Changed `json:"commands"`
}

// Shift is how many verdicts went from one to another.
type Shift struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

// Changed is a command whose verdict changes.
type Changed struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd,omitempty"` // where it first ran
	From    string `json:"from"`
	To      string `json:"to"`
	Count   int    `json:"count"`
	Was     string `json:"was"` // the logged reason
	Now     string `json:"now"` // the reason now
}

// Entries replays entries (damaged: the log's damaged lines) with decide,
// which returns the gate to decide an entry under (one per working
// directory, say).
func Entries(entries []decisionlog.Entry, damaged int, gateFor func(cwd string) (*gate.Gate, error)) (*Result, error) {
	out := &Result{Damaged: damaged, Changes: []Shift{}, Commands: []Changed{}}
	type key struct{ from, to string }
	type ckey struct{ cmd, from, to string }
	shifts := map[key]int{}
	cmds := map[ckey]*Changed{}
	var order []ckey
	for _, en := range entries {
		line := en.Command
		if en.Layer == decisionlog.LayerRuntime && len(en.Argv) > 0 {
			line = runlayer.ArgvString(en.Argv)
		}
		g, err := gateFor(en.Cwd)
		if err != nil {
			return nil, err
		}
		d, ok := g.Redecide(en)
		if !ok {
			out.Skipped++
			continue
		}
		out.Replayed++
		to := d.Verdict.String()
		if to == en.Verdict || en.Layer == decisionlog.LayerRuntime && runs(to) && runs(en.Verdict) {
			// At run time allow and default both let the execution
			// run (and the log keeps one spelling of it, its argv,
			// while it was decided as each: a script's interpreter
			// line too): no change.
			continue
		}
		shifts[key{en.Verdict, to}]++
		k := ckey{line, en.Verdict, to}
		if c := cmds[k]; c != nil {
			c.Count++
			continue
		}
		cmds[k] = &Changed{Command: line, Cwd: en.Cwd, From: en.Verdict, To: to, Count: 1, Was: en.Reason, Now: d.Reason}
		order = append(order, k)
	}
	for k, n := range shifts {
		out.Changes = append(out.Changes, Shift{k.from, k.to, n})
	}
	slices.SortFunc(out.Changes, func(a, b Shift) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.From+" "+a.To, b.From+" "+b.To)
	})
	for _, k := range order {
		out.Commands = append(out.Commands, *cmds[k])
	}
	return out, nil
}

// runs reports whether a run-time verdict lets the execution run.
func runs(v string) bool { return v == "allow" || v == "default" }

// Widens reports whether a change runs more unattended than before.
func Widens(from, to string) bool {
	rank := map[string]int{"allow": 0, "default": 1, "ask": 2, "deny": 3}
	return rank[to] < rank[from]
}
