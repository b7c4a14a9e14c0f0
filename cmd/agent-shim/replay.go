package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/replay"
	"github.com/agent-shim/agent-shim/internal/report"
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
	// A file that is not there would be an empty policy, and every
	// verdict it "changes" a false alarm.
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if *cfg != "" {
			return fmt.Errorf("replay: --config %s does not exist", path)
		}
		return fmt.Errorf("replay: the policy %s does not exist (agents-setup writes it; --config names another)", path)
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
// the gates load builds, one per working directory (package replay).
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
	out, err := replay.Entries(entries, damaged, func(cwd string) (*gate.Gate, error) {
		if gates[cwd] == nil {
			g, err := load(cwd)
			if err != nil {
				return nil, err
			}
			gates[cwd] = g
		}
		return gates[cwd], nil
	})
	if err != nil {
		return err
	}
	if asJSON {
		return report.JSON(e.stdout, out)
	}
	report.Replay(e.stdout, out)
	return nil
}
