package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/hookmode"
	"github.com/agent-shim/agent-shim/internal/report"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// runtimeAvailable says whether the run-time layer can run here
// (supervisor.Available; tests replace it).
var runtimeAvailable = supervisor.Available

// maxExplainInput bounds a command line read from standard input.
const maxExplainInput = 64 << 20

// explain shows every command a line would run, the rule that decides it
// and why. It is a formatter over the gate's Explain: the gate is loaded
// as hook and shell mode load it (the same config.json, compact cache,
// scope, mode, level, tool patterns and session answers), so explain says
// exactly what they would do. The exit status is 0 whatever the verdict.
func (e *env) explain(args []string) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	cfg := fs.String("config", "", "config.json to read (default: the agent's)")
	cwd := fs.String("cwd", "", "decide as for an agent working in `DIR` (default: the current directory)")
	wide := fs.Bool("wide", false, "print every column whole, however wide (default: fit 100 columns)")
	runtime := fs.Bool("runtime", false, "decide as shell mode does with the run-time layer on: what the static reading cannot see into is checked as it runs")
	tool := fs.String("tool", "", "decide a call of the tool `NAME` (an MCP server's), its input the JSON object given in place of the command line")
	if err := e.parseFlags(fs, "agent-shim explain [--json] [--wide] [--runtime] [--config FILE] [--cwd DIR] [--tool NAME] [--] '<command line>'|'<tool input>'|-", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("explain takes the command line as one argument (quote it), or - to read it from standard input; got %d", fs.NArg())
	}
	line := fs.Arg(0)
	if line == "-" {
		data, err := io.ReadAll(io.LimitReader(e.stdin, maxExplainInput+1))
		if err != nil {
			return fmt.Errorf("reading the command line: %w", err)
		}
		if len(data) > maxExplainInput {
			return fmt.Errorf("command line longer than %d bytes", maxExplainInput)
		}
		line = strings.TrimSuffix(string(data), "\n")
	}
	s, err := e.open(context.Background(), openOptions{config: *cfg, cwd: *cwd, layer: *runtime})
	if err != nil {
		return err
	}
	defer s.close()
	shown, err := e.configPath(*cfg) // as given, not made absolute
	if err != nil {
		return err
	}
	if *tool != "" {
		return e.explainTool(s, shown, *tool, line, *asJSON)
	}
	x := s.g.Explain(line)
	h, _ := s.g.Host()
	ok, why := runtimeAvailable()
	layer := report.LayerState(h.Runtime, ok, why)
	if *asJSON {
		return report.JSON(e.stdout, report.ExplainJSON(shown, x, layer))
	}
	var approve string
	if grantLifts(s, line, x.Request) {
		approve = hookmode.ApproveHint(shown, x.Request)
	}
	report.Explain(e.stdout, shown, x, report.ExplainOptions{Wide: *wide, Layer: layer, Approve: approve})
	return nil
}

// grantLifts reports whether the grant an "always" answer to req would
// save lets the line through: it is tried on a gate of the same
// config.json with the grant added. (What runs agent-shim, or writes a
// protected path, asks whatever a grant says.)
func grantLifts(s *shim, line string, req *gate.Request) bool {
	if req == nil {
		return false
	}
	if req.Always.Tool == "" {
		return true // a path for the scope: not a line's grant
	}
	root := ""
	if roots := s.g.Scope().Roots(); len(roots) > 0 {
		root = roots[0]
	}
	tools, err := gate.NewToolPolicy(root, []string{req.Always.Tool + ":" + req.Always.Pattern}, nil)
	if err != nil {
		return false
	}
	with, err := gate.Load(s.config, gate.Options{Scope: s.g.Scope(), Tools: tools})
	if err != nil {
		return false
	}
	return with.DecideBash(line).Verdict == gate.Allow
}

// explainTool decides one call of a tool that is not a shell, its input
// the JSON object given, and says which rule decided it.
func (e *env) explainTool(s *shim, shown, tool, input string, asJSON bool) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		return usagef("explain --tool %s: the tool's input must be one JSON object: %v", tool, err)
	}
	c := &gate.Call{ToolName: tool, ToolInput: in} // paths from the gate's directory (--cwd)
	d, err := s.g.DecideCall(c)
	if err != nil {
		return err
	}
	return report.ExplainTool(e.stdout, shown, tool, d, asJSON)
}
