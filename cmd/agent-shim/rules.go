package main

import (
	"flag"
	"fmt"
	"slices"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

const rulesSynopsis = "agent-shim rules [--config FILE] [--notes] claude-code|codex|gemini-cli"

// rules prints the second line for an agent: the policy's deny rules and
// the never-allow list (and, for Claude Code, its ask rules) in the
// agent's own rule format (see package secondline). --notes prints,
// instead, what the rules leave out, rule by rule.
func (e *env) rules(args []string) error {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	cfg := fs.String("config", "", "config.json to read (default: the agent's)")
	notes := fs.Bool("notes", false, "print what the rules cannot express, per policy rule, instead of the rules")
	if err := e.parseFlags(fs, rulesSynopsis, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("rules takes one agent: %s", rulesSynopsis)
	}
	i := slices.IndexFunc(secondline.Agents, func(c secondline.Compiler) bool { return c.Name == fs.Arg(0) })
	if i < 0 {
		return usagef("rules: unknown agent %q (agents: claude-code, codex, gemini-cli)", fs.Arg(0))
	}
	path, err := e.configPath(*cfg)
	if err != nil {
		return err
	}
	f, err := config.Load(path)
	if err != nil {
		return err
	}
	tbl := programs.Builtin()
	if len(f.Shim.Programs) > 0 {
		files := make([]programs.File, len(f.Shim.Programs))
		for i, pf := range f.Shim.Programs {
			files[i] = programs.File{Name: pf.File, Data: []byte(pf.Text)}
		}
		if tbl, err = programs.WithOverlays(files...); err != nil {
			return fmt.Errorf("%s: agentShim.programs: %w", path, err)
		}
	}
	out := secondline.Agents[i].Compile(secondline.Compile(secondline.Rules(f, gate.NeverAllow()), tbl))
	if *notes {
		fmt.Fprintf(e.stdout, "# %s: %d policy rules compiled into %d rules\n", fs.Arg(0), out.Compiled, out.Patterns)
		for _, n := range out.Notes {
			fmt.Fprintln(e.stdout, n)
		}
		return nil
	}
	_, err = e.stdout.Write(out.Text)
	return err
}
