package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/hookmode"
)

// The hook: one agent's hook call on stdin, decided and answered in the
// agent's protocol (package hookmode). Whatever goes wrong (input that is
// not JSON, an unknown event, a bad config.json, no decision in time) is
// answered with exit 2 and the reason on stderr, which every agent reads
// as "blocked": never allow.

var hookSynopsis = "agent-shim hook " + agents.Names("|") + " [--config FILE]"

// hook answers one pre-tool-use hook call. Its flags are parsed by hand:
// it runs once per tool call and should cost as little as a process can.
func (e *env) hook(ctx context.Context, args []string) int {
	var name, cfg string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprintf(e.stdout, "usage: %s\n", hookSynopsis)
			return exitOK
		case a == "--config" || a == "-config":
			if i+1 == len(args) {
				return e.block(usagef("hook: flag %s needs a file", a))
			}
			i++
			cfg = args[i]
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			_, cfg, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-"):
			return e.block(usagef("hook: unknown flag %s", a))
		case name != "":
			return e.block(usagef("hook: one agent, got %q and %q", name, a))
		default:
			name = a
		}
	}
	ag := agents.ByName(name)
	if ag == nil {
		if name == "" {
			return e.block(usagef("hook: name the agent: %s", hookSynopsis))
		}
		return e.block(usagef("hook: unknown agent %q (agents: %s)", name, agents.Names(", ")))
	}
	// The call is decided on this goroutine, against the hook's deadline:
	// past it (a strange file, a slow disk, a lock) a timer answers
	// "blocked" and ends the process (hookExit), before the agent's own
	// timeout lets the call through. What the decision writes is kept back
	// until it is known to be in time. (No second goroutine: handing the
	// call to one costs a thread wake-up on every call.)
	var state atomic.Int32 // 0 deciding, 1 answered in time, 2 past the deadline
	late := make(chan int, 1)
	timer := time.AfterFunc(hookDeadline, func() {
		if state.CompareAndSwap(0, 2) {
			code := e.block(fmt.Errorf("no decision within %v", hookDeadline))
			hookExit(code)
			late <- code
		}
	})
	if hookStall != nil {
		hookStall() // tests: a decision that does not come in time
	}
	var out, errout bytes.Buffer
	inner := &env{stdin: e.stdin, stdout: &out, stderr: &errout, getenv: e.getenv}
	code := inner.hookCall(ctx, ag, cfg)
	timer.Stop()
	if !state.CompareAndSwap(0, 1) {
		return <-late // answered by the timer (tests: hookExit returned)
	}
	e.stderr.Write(errout.Bytes())
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		return e.block(err)
	}
	if code == exitOK {
		e.warnNoPolicy(cfg)
	}
	e.exportDecisionsFor(cfg) // export.go: off the decision path
	return code
}

// warnNoPolicy says on stderr which policy file a call was decided by
// when that file does not exist: without it only the built-in lists
// hold, and every other call is left to the agent, which should not
// happen unnoticed. (One stat, after the answer.)
func (e *env) warnNoPolicy(cfg string) {
	path, err := e.configPath(cfg)
	if err != nil {
		return // the call was decided: it found the file some way
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "agent-shim: warning: the policy %s does not exist: only the built-in never-allow list and protected paths hold, every other call is left to the agent; agents-setup writes it\n", path)
	}
}

// hookExit ends the process once the deadline has answered; tests replace
// it to go on.
var hookExit = os.Exit

// hookStall, when set by a test, runs before a call is decided.
var hookStall func()

// hookProcs, when set by a test, are the agent's processes a pending
// approval names (approvals.Procs): a test's hook and its approve run in
// one process.
var hookProcs func() []approvals.Proc

// hookDeadline bounds a hook call: under the guard's time (guardSeconds)
// and the agents' own timeouts. (A variable for the tests.)
var hookDeadline = 10 * time.Second

// hookCall reads, decides and answers one call of agent ag (package
// hookmode).
func (e *env) hookCall(ctx context.Context, ag *agents.Agent, cfg string) int {
	st, err := e.ticketStore()
	if err != nil {
		return e.block(err)
	}
	o := hookmode.Options{Agent: ag, Config: cfg, Getenv: e.getenv, Log: e.decisionLog(), Tickets: st, Warn: e.stderr, Now: now,
		Procs: hookProcs}
	return e.block(hookmode.Call(ctx, o, e.stdin, e.stdout))
}

// block is hook mode's answer to an error: exit 2, the reason on stderr.
// A nil error is exit 0 with no output.
func (e *env) block(err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(e.stderr, "agent-shim: blocked: %v\n", err)
	return exitBlock
}
