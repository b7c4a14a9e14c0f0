package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/shellmode"
)

// Test seams: tests observe the exec and answer the prompts.
var (
	// execShell replaces the process with the real shell.
	execShell = syscall.Exec
	// openTTY opens the controlling terminal, where prompts go.
	openTTY = func() (io.ReadWriteCloser, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }
	// executable is this program, which the real shell must not be.
	executable = os.Executable
)

// shell stands in for the agent's shell: it decides the -c command line
// and execs the real shell with the same arguments, or refuses with exit
// 126. It returns only when it does not exec. An agent's wrapper around
// the command (agents.Unwrap) is not decided: the command inside it is, as
// the line, and the hook's ticket is matched on it. Every refusal is
// written to the decision log.
func (e *env) shell(ctx context.Context, args []string) int {
	// The decision export, as the hook has it (export.go): after the line
	// or its refusal. A line whose shell is exec'd (runtime off or
	// unavailable) leaves it to the next call; the log keeps the record.
	defer e.exportDecisions()
	cmd, err := shellmode.Command(args)
	if err != nil {
		return e.refuseLogged(nil, strings.Join(args[1:], " "), err)
	}
	var prompter gate.Prompter
	if tty, err := openTTY(); err == nil {
		defer tty.Close()
		prompter = gate.NewTerminalPrompter(tty, tty)
	}
	s, err := e.open(ctx, openOptions{})
	if err != nil {
		return e.refuseLogged(nil, cmd, err)
	}
	// The real shell first: its dialect is how the line is read.
	cfg := &lazyConfig{path: s.config, g: s.g}
	path, err := e.realShell(cfg)
	if err != nil {
		s.close()
		return e.refuseLogged(s, cmd, err)
	}
	// The gate reads the line as the real shell does, the command inside
	// an agent's wrapper of it.
	line, d := s.g.DecideLine(cmd, path, e.getenv)
	// Hook tickets (ticket.go): an ask ticket approves the line once;
	// agentShim.requireHook refuses a line no hook has seen.
	seen, ticketed, err := e.ticketGate(cfg, line)
	if err != nil {
		s.close()
		return e.refuseLogged(s, line, err)
	}
	// A ticket for a command inside line approves nothing: line is
	// decided whole all the same.
	ticketed = ticketed && seen == line
	wd, _ := os.Getwd()
	var ap *gate.Approval
	if ticketed {
		// The person approved it at the agent's prompt; a deny rule
		// still refuses it (no approval of a Deny).
		if ap = d.Approve(gate.AnswerOnce, gate.ByAgent, wd, time.Now()); ap == nil {
			s.close()
			return e.refuseLogged(s, line, fmt.Errorf("%w: %s", gate.ErrDenied, d.Reason))
		}
	} else {
		ap, err = e.settle(ctx, s, prompter, line, d)
	}
	s.close()
	if err != nil {
		return e.refuse(err) // settle logged the decision
	}
	if ap == nil && d.Approved {
		// Approved for the session or always, earlier.
		ap = d.Approve(gate.AnswerSession, gate.ByTerminal, wd, time.Now())
	}
	return e.runProgram(ctx, s, cfg, "shell", path, shellmode.Argv(path, args), ap)
}

// settle settles shell mode's decision d of cmd and, when it needs a
// person, asks on the terminal. A nil error means run it; the approval is
// what the person approved just now (nil when nobody was asked).
func (e *env) settle(ctx context.Context, s *shim, p gate.Prompter, cmd string, d gate.Decision) (*gate.Approval, error) {
	defer e.logShell(s, cmd, d, &p)() // the decision log, with the answer (logcmd.go)
	switch d.Verdict {
	case gate.Allow:
		return nil, nil
	case gate.Deny:
		return nil, fmt.Errorf("%w: %s", gate.ErrDenied, d.Reason)
	}
	if p == nil {
		return nil, &runlayer.Hinted{Err: fmt.Errorf("%w: %s, and there is no terminal to ask on", gate.ErrNeedsApproval, d.Reason),
			Hint: approveHint(s.config, d.Request) + ", or run the agent from a terminal to be asked"}
	}
	a, err := p.AskApproval(ctx, *d.Request)
	if err != nil {
		return nil, fmt.Errorf("asking for approval: %w", err)
	}
	if a == gate.AnswerNo {
		return nil, fmt.Errorf("%w: the person said no (%s)", gate.ErrDenied, d.Reason)
	}
	if err := s.g.Apply(*d.Request, a); err != nil {
		return nil, err
	}
	if err := s.session.Remember(ctx, *d.Request, a); err != nil {
		// The call was approved; later calls will be asked again.
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
	}
	wd, _ := os.Getwd()
	return d.Approve(a, gate.ByTerminal, wd, time.Now()), nil
}

// refuseLogged refuses as refuse does and writes the refusal of line to
// the decision log: one that no decision of the gate made (a bad argv or
// config, no hook ticket under requireHook, a deny found through a
// ticket).
func (e *env) refuseLogged(s *shim, line string, err error) int {
	var p gate.Prompter
	e.logShell(s, line, gate.Decision{Verdict: gate.Deny, Reason: oneLine(err.Error())}, &p)()
	return e.refuse(err)
}

// refuse reports why shell mode does not run the command and returns 126.
func (e *env) refuse(err error) int {
	if errors.Is(err, gate.ErrDenied) || errors.Is(err, gate.ErrNeedsApproval) {
		fmt.Fprintf(e.stderr, "agent-shim: %s\n", oneLine(err.Error()))
	} else {
		fmt.Fprintf(e.stderr, "agent-shim: error: %s\n", oneLine(err.Error()))
	}
	var h *runlayer.Hinted
	if errors.As(err, &h) && h.Hint != "" {
		fmt.Fprintf(e.stderr, "agent-shim: hint: %s\n", oneLine(h.Hint))
	}
	return exitDenied
}

// lazyConfig is config.json's settings for the shim's host (shell,
// runtime, requireHook): as the gate loaded them (config.json or its
// compact copy), else read (config.LoadSettings) once when first needed.
type lazyConfig struct {
	path string
	g    *gate.Gate
	f    *config.File
	err  error
	read bool
}

func (c *lazyConfig) load() (*config.File, error) {
	if c.read {
		return c.f, c.err
	}
	c.read = true
	if h, ok := c.gateHost(); ok {
		c.f = &config.File{Path: c.path}
		c.f.Shim.Shell, c.f.Shim.Runtime, c.f.Shim.RequireHook = h.Shell, h.Runtime, h.RequireHook
		return c.f, nil
	}
	c.f, c.err = config.LoadSettings(c.path) // the settings only: not the grants and rules
	return c.f, c.err
}

func (c *lazyConfig) gateHost() (gate.Host, bool) {
	if c.g == nil {
		return gate.Host{}, false
	}
	return c.g.Host()
}

// realShell returns the shell to exec: AGENT_SHIM_SHELL, else
// agentShim.shell, else /bin/bash (shellmode.Find).
func (e *env) realShell(cfg *lazyConfig) (string, error) {
	name := e.getenv("AGENT_SHIM_SHELL")
	from := "AGENT_SHIM_SHELL"
	if name == "" {
		f, err := cfg.load()
		if err != nil {
			return "", err
		}
		name, from = f.Shim.Shell, cfg.path+": agentShim.shell"
	}
	return shellmode.Find(name, from, executable)
}

// sameFile: see shellmode.SameFile.
func sameFile(a, b string) bool { return shellmode.SameFile(a, b) }
