package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agent-shim/agent-shim/internal/shellmode"
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
	// layerAvailable reports whether the run-time layer can run here:
	// shell mode then reads its lines as they run under it.
	layerAvailable = supervisor.Available
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
	return e.shellMode().Program(ctx, s.c, &shellmode.Host{Path: s.config, Gate: s.g}, "run", path, argv, nil)
}
