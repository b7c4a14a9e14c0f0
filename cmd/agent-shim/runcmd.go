package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// Test seams for the run-time layer (see runlayer.Run).
var (
	// superviseRun runs a program under the supervisor.
	superviseRun = supervisor.Run
	// reraise dies of sig, as the supervised program did: the agent
	// sees what it would have seen had the program been exec'd. It
	// returns only when the signal does not kill.
	reraise = supervisor.Reraise
	// tempDirs are the temporary directories the tree may write in.
	tempDirs = func() []string { return []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} }
	// runChild runs the program as the shim's child where the layer is
	// unavailable; nil is runlayer's.
	runChild func(path string, argv []string, stdin io.Reader, stdout, stderr io.Writer) (supervisor.Status, error)
)

// runCmd is `agent-shim run [--config FILE] -- PROGRAM [ARGS...]`: PROGRAM
// runs under the supervisor, every program it executes decided by the
// policy and its writes confined, as shell mode runs an allowed line.
func (e *env) runCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	configPath := fs.String("config", "", "the policy `file` (default: the agent's config.json)")
	if err := e.parseFlags(fs, "agent-shim run [--config FILE] -- PROGRAM [ARGS...]", args); err != nil {
		return e.exitCode(err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return e.exitCode(usagef("run: no program to run"))
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return e.refuse(fmt.Errorf("finding %s: %w", argv[0], err))
	}
	s, err := e.open(ctx, openOptions{config: *configPath})
	if err != nil {
		return e.refuse(err)
	}
	s.close()
	return e.runProgram(ctx, s, &lazyConfig{path: s.config, g: s.g}, "run", path, argv, nil)
}

// runProgram runs an allowed program (package runlayer): under the
// supervisor when the run-time layer is on and available, else as
// agentShim.runtime says. agent names the front end in the decision log
// ("shell", "run"); ap is what a person approved of the line that starts
// it (nil: nothing). It returns the program's status, 126 when it cannot
// run it.
func (e *env) runProgram(ctx context.Context, s *shim, cfg *lazyConfig, agent, path string, argv []string, ap *gate.Approval) int {
	f, err := cfg.load()
	if err != nil {
		return e.refuse(err)
	}
	r := e.runLayer(s, agent, ap)
	r.Config, r.Mode = cfg.path, f.Shim.Runtime
	code, err := r.Program(ctx, path, argv)
	if err != nil {
		return e.refuse(err)
	}
	return code
}

// runLayer is the run of a program for s, with the process's streams,
// the decision log and the test seams.
func (e *env) runLayer(s *shim, agent string, ap *gate.Approval) *runlayer.Run {
	r := &runlayer.Run{
		Agent: agent, Approval: ap,
		Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv, Now: now,
		Supervise: superviseRun, Reraise: reraise, TempDirs: tempDirs, Child: runChild, Exec: execShell,
	}
	if s != nil {
		r.Gate = s.g
		if s.session != nil {
			r.Session = strings.TrimSuffix(filepath.Base(s.session.Path), ".json")
			r.Marker = strings.TrimSuffix(s.session.Path, ".json") + ".runtime-off"
		}
	}
	if w := e.decisionLog(); w != nil {
		r.Log = w
	}
	return r
}
