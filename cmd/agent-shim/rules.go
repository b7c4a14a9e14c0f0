package main

import (
	"flag"
	"fmt"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

// rulesSynopsis is rules' synopsis (a function: nothing is built at a
// process's start, the hook's).
func rulesSynopsis() string {
	return "agent-shim rules [--config FILE] [--notes] " + agents.Names("|")
}

// rules prints the second line for an agent: the policy's deny rules and
// the never-allow list (and, for Claude Code, its ask rules) in the
// agent's own rule format (package secondline; the agent's compiler is its
// entry's, agents.Agent.Rules). --notes prints, instead, what the rules
// leave out, rule by rule.
func (e *env) rules(args []string) error {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	cfg := fs.String("config", "", "config.json to read (default: the agent's)")
	notes := fs.Bool("notes", false, "print what the rules cannot express, per policy rule, instead of the rules")
	if err := e.parseFlags(fs, rulesSynopsis(), args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("rules takes one agent: %s", rulesSynopsis())
	}
	a := agents.ByName(fs.Arg(0))
	if a == nil {
		return usagef("rules: unknown agent %q (agents: %s)", fs.Arg(0), agents.Names(", "))
	}
	path, err := e.configPath(*cfg)
	if err != nil {
		return err
	}
	p, err := secondline.Load(path, gate.NeverAllow())
	if err != nil {
		return err
	}
	out := a.Rules.Compile(p)
	if *notes {
		fmt.Fprintf(e.stdout, "# %s: %d policy rules compiled into %d rules\n", a.Name, out.Compiled, out.Patterns)
		for _, n := range out.Notes {
			fmt.Fprintln(e.stdout, n)
		}
		return nil
	}
	_, err = e.stdout.Write(out.Text)
	return err
}
