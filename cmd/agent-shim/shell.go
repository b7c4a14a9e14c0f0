package main

import (
	"context"
	"io"
	"os"
	"syscall"

	"github.com/agent-shim/agent-shim/internal/hookmode"
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

// shellMode is shell mode (package shellmode) for this process, with the
// test seams as they are now.
func (e *env) shellMode() *shellmode.Shell {
	sh := &shellmode.Shell{
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv,
		OpenTTY: openTTY, Self: executable, Now: now, TicketNow: ticketNow,
		Hint: hookmode.ApproveHint, Export: e.exportDecisions, Available: layerAvailable,
		Layer: func(r *runlayer.Run) {
			r.Supervise, r.Reraise, r.TempDirs, r.Child, r.Exec = superviseRun, reraise, tempDirs, runChild, execShell
		},
	}
	if w := e.decisionLog(); w != nil {
		sh.Log = w
	}
	return sh
}

// shell stands in for the agent's shell (shellmode.Shell.Main).
func (e *env) shell(ctx context.Context, args []string) int { return e.shellMode().Main(ctx, args) }

// refuse reports why a command does not run and returns 126.
func (e *env) refuse(err error) int { return shellmode.Refuse(e.stderr, err) }
