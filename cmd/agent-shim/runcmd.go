package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/runlayer"
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

// runCmd is `agent-shim run [--config FILE] [--agent NAME] -- PROGRAM
// [ARGS...]`: PROGRAM runs under the supervisor, every program it
// executes decided by the policy and its writes confined, as shell mode
// runs an allowed line. An agent (named, or known by its program's name
// on PATH) writes its own directories too, but for its settings, hooks
// and rules.
func (e *env) runCmd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	configPath := fs.String("config", "", "the policy `file` (default: the agent's config.json)")
	agentName := fs.String("agent", "", "the agent PROGRAM is ("+agents.Names(", ")+"; default: by its name on PATH): it writes its own directories, but for its settings, hooks and rules")
	if err := e.parseFlags(fs, "agent-shim run [--config FILE] [--agent NAME] -- PROGRAM [ARGS...]", args); err != nil {
		return e.exitCode(err)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return e.exitCode(usagef("run: no program to run"))
	}
	a := agents.ByName(*agentName)
	if *agentName != "" && a == nil {
		return e.exitCode(usagef("run: --agent %q: not an agent (%s)", *agentName, agents.Names(", ")))
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return e.refuse(fmt.Errorf("finding %s: %w", argv[0], err))
	}
	if a == nil {
		a = runlayer.AgentOf(argv[0])
	}
	s, err := e.open(ctx, openOptions{config: *configPath})
	if err != nil {
		return e.refuse(err)
	}
	s.close()
	sh := e.shellMode()
	if a != nil {
		state, layer := runlayer.AgentState(a, e.getenv), sh.Layer
		sh.Layer = func(r *runlayer.Run) { layer(r); r.State = state }
	}
	// The tree's hooks cannot start the decision export: the run does.
	defer e.exportWhile(*configPath)()
	return sh.Program(ctx, s.c, &shellmode.Host{Path: s.config, Gate: s.g}, "run", path, argv, nil)
}
