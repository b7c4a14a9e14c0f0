package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/shellmode"
	"github.com/agent-shim/agent-shim/internal/supervisor/inherited"
	"github.com/agent-shim/agent-shim/internal/usage"
)

// Exit codes. They are a contract: see doc.go.
const (
	exitOK     = 0   // the command ran; for explain, whatever the verdict
	exitError  = 1   // bad configuration or an internal error
	exitUsage  = 2   // bad command line
	exitBlock  = 2   // hook mode: the blocking answer of every protocol
	exitDenied = 126 // shell mode refused to run the command
)

// usageError marks errors in how the program was called; hint, when
// set, says what was meant (did you mean …).
type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// commands are the subcommands run dispatches, for suggestions.
var commands = []string{"hook", "explain", "recommend", "run", "install", "uninstall", "doctor", "log", "replay", "rules", "verify", "help"}

// unknownCommand is the usage error for a subcommand run does not know,
// naming the closest one.
func unknownCommand(name string) error {
	e := &usageError{msg: fmt.Sprintf("unknown command %q", name)}
	if c := usage.Closest(name, commands); c != "" {
		e.hint = "did you mean 'agent-shim " + c + "'?"
	}
	return e
}

// unknownAgent is the usage error for an agent cmd does not know.
func unknownAgent(cmd, name string) error {
	e := &usageError{msg: fmt.Sprintf("%s: unknown agent %q (agents: %s)", cmd, name, agents.Names(", "))}
	var known []string
	for _, a := range agents.All {
		known = append(known, a.Name)
	}
	if c := usage.Closest(name, known); c != "" {
		e.hint = "did you mean " + c + "?"
	}
	return e
}

// unknownFlag is the usage error for a flag a subcommand does not have,
// naming the closest of known.
func unknownFlag(cmd, flag string, known []string) error {
	e := &usageError{msg: fmt.Sprintf("%s: unknown flag %s", cmd, flag)}
	name, _, _ := strings.Cut(strings.TrimLeft(flag, "-"), "=")
	if c := usage.Closest(name, known); c != "" {
		e.hint = "did you mean --" + c + "?"
	}
	return e
}

// env is the process environment; tests replace it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

const usageText = `usage: agent-shim hook claude-code|codex|gemini-cli [--config FILE]
       agent-shim -c '<command line>' [arg0 [args...]]    (shell mode; also -lc, -e -o pipefail -c, -i -c)
       agent-shim explain [--json] [--wide] [--runtime] [--config FILE] [--cwd DIR] [--tool NAME] [--] '<command line>'|'<tool input>'|-
       agent-shim recommend [--json] [--apply] [--config FILE]
       agent-shim run [--config FILE] [--agent NAME] -- PROGRAM [ARGS...]
       agent-shim install claude-code|codex|gemini-cli [--settings FILE] [--config FILE] [--shell] [--managed]
       agent-shim uninstall claude-code|codex|gemini-cli [--settings FILE] [--managed]
       agent-shim doctor [--config FILE] [--json]
       agent-shim log [--since D] [--verdict V] [--json] [-n N] [--log FILE]
       agent-shim replay [--config NEW] [--log FILE] [--json]
       agent-shim approve [--json] [<id>]
       agent-shim approvals [--json]
       agent-shim revoke <id>
       agent-shim rules [--config FILE] [--notes] claude-code|codex|gemini-cli
       agent-shim verify [--json] [-v] [--timeout D] claude-code|codex|gemini-cli
       agent-shim --version

agent-shim decides what an AI agent's tool calls may do.

  hook        answer an agent's pre-tool-use hook (JSON on stdin)
  -c ...      stand in for the agent's shell: decide, then exec the real shell
  explain     show every command a line would run, the rule that decides it and why
  recommend   suggest grants from the approval log; --apply saves them
  run         run a program (an agent, a CI job) with every program it executes decided
  install     put the hook into an agent's settings (absolute path); --shell: shell mode too
  uninstall   take out what install put in
  doctor      check that every agent found is guarded and fails closed
  log         the recent decisions, with the rule that decided each
  replay      decide the logged commands under another policy: the verdicts that change
  rules       the policy in an agent's own rules (the second line, for when the hook is not there)
  approve     the calls an agent could not ask about; with an id, let the agent's retry of it run once
  approvals   the one-shot approvals and the session answers, with their ids
  revoke      take back a one-shot approval or a session answer
  verify      prove the hook as installed in the agent release you have (runs it headless, locally)
`

// run is main without the process: tests call it directly.
//
// The hook and shell paths are dispatched first and never touch a CLI
// framework: they run once per tool call, and whole-process cost matters
// there (see doc.go). The binary imports no CLI framework at all, because
// package initialisation is paid on every start, whatever runs.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if len(args) < 2 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	if shellmode.IsArgv(args[1]) || args[1] == "run" {
		// These may run the run-time layer: the descriptors this process
		// inherited are listed before it opens any (the hook's path
		// does not pay for it).
		inherited.Scan()
	}
	if shellmode.IsArgv(args[1]) {
		return e.shell(ctx, args)
	}
	var err error
	switch args[1] {
	case "hook":
		return e.hook(ctx, args[2:])
	case "explain":
		err = e.explain(args[2:])
	case "recommend":
		err = e.recommend(ctx, args[2:])
	case "run":
		return e.runCmd(ctx, args[2:])
	case "doctor":
		return e.doctor(ctx, args[2:])
	case "install":
		err = e.install(ctx, args[2:])
	case "uninstall":
		err = e.uninstall(ctx, args[2:])
	case "log":
		err = e.logcmd(args[2:])
	case "replay":
		err = e.replay(args[2:])
	case "rules":
		err = e.rules(args[2:])
	case "approve":
		err = e.approve(args[2:])
	case "approvals":
		err = e.approvalsCmd(args[2:])
	case "revoke":
		err = e.revoke(ctx, args[2:])
	case "verify":
		return e.verify(ctx, args[2:])
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, usage.Version("agent-shim"))
		return exitOK
	default:
		err = unknownCommand(args[1])
	}
	return e.exitCode(err)
}

func (e *env) exitCode(err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "agent-shim: error: %v\n", err)
		if ue.hint != "" {
			fmt.Fprintf(e.stderr, "agent-shim: hint: %s\n", ue.hint)
		} else {
			fmt.Fprintf(e.stderr, "agent-shim: hint: run 'agent-shim --help' for usage\n")
		}
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "agent-shim: error: %v\n", err)
	return exitError
}

// errHelp means help was asked for and printed.
var errHelp = errors.New("help printed")

// parseFlags parses a subcommand's flags, which come before its arguments.
// -h prints the usage line and fs's flags on stdout.
func (e *env) parseFlags(fs *flag.FlagSet, synopsis string, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "usage: %s\n", synopsis)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return errHelp
	}
	if name, ok := strings.CutPrefix(fmt.Sprint(err), "flag provided but not defined: "); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		return unknownFlag(fs.Name(), name, known)
	}
	if err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}
