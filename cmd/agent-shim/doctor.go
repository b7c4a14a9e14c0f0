package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/doctor"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// doctor checks that every agent found on this machine is guarded and
// fails closed (package doctor); any failure is exit 1.

const doctorSynopsis = "agent-shim doctor [--config FILE] [--json]"

func (e *env) doctor(ctx context.Context, args []string) int {
	var cfgFlag string
	asJSON := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", doctorSynopsis)
			return exitOK
		case strings.HasPrefix(a, "-") && flag == "config":
			if !hasVal {
				if i+1 == len(args) {
					return e.exitCode(usagef("doctor: flag %s needs a file", a))
				}
				i++
				val = args[i]
			}
			cfgFlag = val
		case strings.HasPrefix(a, "-") && flag == "json" && !hasVal:
			asJSON = true
		case strings.HasPrefix(a, "-"):
			return e.exitCode(unknownFlag("doctor", a, []string{"config", "json", "help"}))
		default:
			return e.exitCode(usagef("doctor: unexpected argument %s", a))
		}
	}
	exe, err := self()
	if err != nil {
		return e.exitCode(err)
	}
	cfg, cerr := e.configPath(cfgFlag)
	r := doctor.Run(ctx, doctor.Options{Exe: exe, Config: cfg, ConfigErr: cerr, Getenv: e.getenv, Runtime: supervisor.Available})
	if asJSON {
		data, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", data)
	} else {
		e.writeChecks("", r.Policy)
		for _, a := range r.Agents {
			if a.Settings != "" {
				fmt.Fprintf(e.stdout, "%s (%s)\n", a.Agent, a.Settings)
			}
			e.writeChecks("  ", a.Checks)
		}
	}
	if !r.OK {
		return exitError
	}
	return exitOK
}

func (e *env) writeChecks(indent string, checks []agents.Check) {
	for _, c := range checks {
		st := string(c.Status)
		if c.Status == agents.Fail {
			st = "FAIL"
		}
		fmt.Fprintf(e.stdout, "%s%-4s  %s: %s\n", indent, st, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(e.stdout, "%s      fix: %s\n", indent, c.Fix)
		}
	}
}
