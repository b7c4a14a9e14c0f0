package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/install"
	"github.com/agent-shim/agent-shim/internal/secondline"
)

// install and uninstall put the shim's hook into an agent's settings, and
// take it out again (package install; what each agent reads: package
// agents).

var (
	installSynopsis   = "agent-shim install " + agents.Names("|") + " [--settings FILE] [--config FILE] [--shell] [--managed]"
	uninstallSynopsis = "agent-shim uninstall " + agents.Names("|") + " [--settings FILE] [--managed]"
)

// parseInstallArgs reads install's and uninstall's arguments, flags before
// or after the agent.
func (e *env) parseInstallArgs(cmd string, args []string) (*install.Options, error) {
	synopsis := installSynopsis
	if cmd == "uninstall" {
		synopsis = uninstallSynopsis
	}
	o := install.Options{Getenv: e.getenv}
	name := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", synopsis)
			return nil, errHelp
		case strings.HasPrefix(a, "-") && (flag == "settings" || flag == "config" && cmd == "install"):
			if !hasVal {
				if i+1 == len(args) {
					return nil, usagef("%s: flag %s needs a file", cmd, a)
				}
				i++
				val = args[i]
			}
			if val == "" {
				return nil, usagef("%s: flag %s needs a file", cmd, a)
			}
			abs, err := filepath.Abs(val)
			if err != nil {
				return nil, err
			}
			if flag == "settings" {
				o.Settings = abs
			} else {
				o.Config = abs
			}
		case strings.HasPrefix(a, "-") && flag == "shell" && !hasVal && cmd == "install":
			o.Shell = true
		case strings.HasPrefix(a, "-") && flag == "managed" && !hasVal:
			o.Managed = true
		case strings.HasPrefix(a, "-"):
			known := []string{"settings", "managed", "help"}
			if cmd == "install" {
				known = append(known, "config", "shell")
			}
			return nil, unknownFlag(cmd, a, known)
		case name != "":
			return nil, usagef("%s: one agent, got %q and %q", cmd, name, a)
		default:
			name = a
		}
	}
	if name == "" {
		return nil, usagef("%s: name the agent: %s", cmd, synopsis)
	}
	if o.Agent = agents.ByName(name); o.Agent == nil {
		return nil, unknownAgent(cmd, name)
	}
	if o.Managed && o.Shell {
		return nil, usagef("%s: --shell changes the user's settings; it does not go with --managed", cmd)
	}
	if a := o.Agent; o.Shell && a.ShellEnv == "" {
		// The hook guards it; `agent-shim run -- codex` (or gemini)
		// puts the whole agent under the run-time layer.
		var can []string
		for _, b := range agents.All {
			if b.ShellEnv != "" {
				can = append(can, b.Title)
			}
		}
		return nil, usagef("%s: --shell is for %s only: %s %s; the hook guards it, and `agent-shim run -- %s` runs it under the run-time layer",
			cmd, strings.Join(can, " and "), a.Name, a.NoShell, a.Program)
	}
	dir, err := stateDir(e.getenv)
	if err != nil {
		return nil, err
	}
	o.StateDir = dir
	return &o, nil
}

// install is `agent-shim install`.
func (e *env) install(ctx context.Context, args []string) error {
	o, err := e.parseInstallArgs("install", args)
	if err != nil {
		return err
	}
	if o.Exe, err = self(); err != nil {
		return err
	}
	// The second line is compiled from the policy the hook will read.
	cfg, err := e.configPath(o.Config)
	if err != nil {
		return err
	}
	if o.Policy, err = secondline.Load(cfg, gate.NeverAllow()); err != nil {
		return fmt.Errorf("reading the policy for the second line: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	return e.report(install.Install(ctx, *o))
}

// uninstall is `agent-shim uninstall`.
func (e *env) uninstall(ctx context.Context, args []string) error {
	o, err := e.parseInstallArgs("uninstall", args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	return e.report(install.Uninstall(ctx, *o))
}

// report prints what install or uninstall did.
func (e *env) report(r *install.Report, err error) error {
	for _, n := range r.Notes {
		fmt.Fprintf(e.stdout, "agent-shim: %s\n", n)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "agent-shim: warning: %s\n", w)
	}
	return err
}

// self is the absolute path of this program, links resolved: what the
// hook command runs.
func self() (string, error) {
	exe, err := executable()
	if err != nil {
		return "", fmt.Errorf("finding agent-shim itself: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", fmt.Errorf("finding agent-shim itself: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}
