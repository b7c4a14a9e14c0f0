package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/runlayer"
)

const replaySynopsis = "agent-shim replay [--config NEW] [--log FILE] [--json]"

// replay decides every command of the decision log again, under the policy
// of another config.json (by default the agent's own, as it is now), and
// prints the verdicts that change, so that a policy change can be reviewed
// against real history before it lands. To replay a manifest change, write
// the config.json it would give to another file first (agents-setup
// --config NEW --root DIR --profile P): the shim links no manifest reader
// (no go-git), which every hook call would pay for.
//
// Only shell commands are replayed, each with the function that decided
// it: hook decisions of a command line as the hook decides a call
// (Decide), shell-mode decisions as shell mode does (DecideBash),
// run-time decisions of an argv as the run-time layer does
// (DecideExecution). A decision that a person's earlier answer made
// (Entry.Approved) depends on that session, not on the policy, and is
// skipped; so are entries whose command was cut (Entry.Cut).
func (e *env) replay(args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	cfg := fs.String("config", "", "the config.json to decide under (default: the agent's)")
	file := fs.String("log", "", "the decision log (default: $XDG_STATE_HOME/agent-shim/decisions.jsonl)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := e.parseFlags(fs, replaySynopsis, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("replay takes no arguments; got %q", fs.Arg(0))
	}
	path, err := e.configPath(*cfg)
	if err != nil {
		return err
	}
	load := func(cwd string) (*gate.Gate, error) {
		var scope *gate.Scope
		if root := e.projectRoot(cwd); root != "" {
			scope = gate.NewScope(root)
		}
		return gate.Load(path, gate.Options{Scope: scope, Dir: cwd})
	}
	return e.replayWith(*file, load, *asJSON)
}

// replayWith replays the log at file (default: the decision log) with
// the gates load builds, one per working directory.
func (e *env) replayWith(file string, load func(cwd string) (*gate.Gate, error), asJSON bool) error {
	logPath, err := e.logPath(file)
	if err != nil {
		return err
	}
	entries, damaged, err := decisionlog.Read(logPath, 0)
	if err != nil {
		return err
	}
	gates := map[string]*gate.Gate{}
	decide := func(en decisionlog.Entry) (gate.Decision, error) {
		g := gates[en.Cwd]
		if g == nil {
			var err error
			if g, err = load(en.Cwd); err != nil {
				return gate.Decision{}, err
			}
			gates[en.Cwd] = g
		}
		return replayDecide(g, en), nil
	}
	return e.replayEntries(entries, damaged, decide, asJSON)
}

// replayed is the outcome of replaying a log.
type replayed struct {
	Replayed int            `json:"replayed"`
	Skipped  int            `json:"skipped"`
	Damaged  int            `json:"damaged,omitempty"`
	Changes  []verdictShift `json:"changes"`
	Commands []changedCmd   `json:"commands"`
}

type verdictShift struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

type changedCmd struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd,omitempty"` // where it first ran
	From    string `json:"from"`
	To      string `json:"to"`
	Count   int    `json:"count"`
	Was     string `json:"was"` // the logged reason
	Now     string `json:"now"` // the reason now
}

// replayDecide decides en again with g, by the function that decided it.
func replayDecide(g *gate.Gate, en decisionlog.Entry) gate.Decision {
	switch en.Layer {
	case decisionlog.LayerRuntime:
		d, _ := g.DecideExecution(gate.Execution{Argv: en.Argv, Dir: en.Cwd}, nil)
		return d
	case decisionlog.LayerShell:
		return g.DecideBash(en.Command)
	}
	return g.Decide(en.Tool, en.Command)
}

func (e *env) replayEntries(entries []decisionlog.Entry, damaged int, decide func(decisionlog.Entry) (gate.Decision, error), asJSON bool) error {
	out := replayed{Damaged: damaged, Changes: []verdictShift{}, Commands: []changedCmd{}}
	type key struct{ from, to string }
	type ckey struct{ cmd, from, to string }
	shifts := map[key]int{}
	cmds := map[ckey]*changedCmd{}
	var order []ckey
	for _, en := range entries {
		line := en.Command
		if en.Layer == decisionlog.LayerRuntime && len(en.Argv) > 0 {
			line = runlayer.ArgvString(en.Argv)
		}
		if !replayable(en) {
			out.Skipped++
			continue
		}
		d, err := decide(en)
		if err != nil {
			return err
		}
		out.Replayed++
		to := d.Verdict.String()
		if to == en.Verdict {
			continue
		}
		shifts[key{en.Verdict, to}]++
		k := ckey{line, en.Verdict, to}
		if c := cmds[k]; c != nil {
			c.Count++
			continue
		}
		cmds[k] = &changedCmd{Command: line, Cwd: en.Cwd, From: en.Verdict, To: to, Count: 1, Was: en.Reason, Now: d.Reason}
		order = append(order, k)
	}
	for k, n := range shifts {
		out.Changes = append(out.Changes, verdictShift{k.from, k.to, n})
	}
	slices.SortFunc(out.Changes, func(a, b verdictShift) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.From+" "+a.To, b.From+" "+b.To)
	})
	for _, k := range order {
		out.Commands = append(out.Commands, *cmds[k])
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	writeReplay(e.stdout, &out)
	return nil
}

// replayable reports whether an entry is a shell command, whole, that the
// policy alone decided.
func replayable(en decisionlog.Entry) bool {
	switch {
	case en.Cut || en.Approved:
		return false
	case en.Layer == decisionlog.LayerRuntime:
		return len(en.Argv) > 0 // not the undoing of a protected path
	case en.Layer == decisionlog.LayerShell:
		return en.Command != ""
	}
	return en.Command != "" && gate.IsCommandTool(en.Tool)
}

// widens reports whether a change runs more unattended than before.
func widens(from, to string) bool {
	rank := map[string]int{"allow": 0, "default": 1, "ask": 2, "deny": 3}
	return rank[to] < rank[from]
}

func writeReplay(w io.Writer, r *replayed) {
	fmt.Fprintf(w, "replayed %d decisions", r.Replayed)
	if r.Skipped > 0 {
		fmt.Fprintf(w, " (%d skipped: not a shell command, or decided by a session's answer)", r.Skipped)
	}
	fmt.Fprintln(w)
	if len(r.Changes) == 0 {
		fmt.Fprintln(w, "no verdict changes")
		return
	}
	total := 0
	for _, c := range r.Changes {
		total += c.Count
	}
	fmt.Fprintf(w, "%d verdicts change:\n", total)
	for _, c := range r.Changes {
		how := "narrower"
		if widens(c.From, c.To) {
			how = "WIDER"
		}
		fmt.Fprintf(w, "  %-7s → %-7s %5d  (%s)\n", c.From, c.To, c.Count, how)
	}
	fmt.Fprintln(w)
	for _, c := range r.Commands {
		fmt.Fprintf(w, "%s → %s  ×%d  %s\n", c.From, c.To, c.Count, truncate(oneLine(c.Command), 80))
		fmt.Fprintf(w, "    was: %s\n    now: %s\n", oneLine(c.Was), oneLine(c.Now))
	}
}
