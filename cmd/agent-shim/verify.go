package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// verifierName is the program beside agent-shim that `agent-shim verify`
// runs: the checks serve a model API on the loopback interface, and the
// hook's binary links no network code (TestDependencies).
const verifierName = "agent-shim-verify"

// verify runs agent-shim-verify from beside this program with the same
// arguments, and exits as it does.
func (e *env) verify(ctx context.Context, args []string) int {
	exe, err := self()
	if err != nil {
		return e.exitCode(err)
	}
	prog := filepath.Join(filepath.Dir(exe), verifierName)
	if _, err := os.Stat(prog); err != nil {
		fmt.Fprintf(e.stderr, "agent-shim: error: verify needs %s beside agent-shim: %v\n", verifierName, err)
		fmt.Fprintf(e.stderr, "agent-shim: hint: go install ./cmd/... installs it beside agent-shim\n")
		return exitError
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	fmt.Fprintf(e.stderr, "agent-shim: error: verify: %v\n", err)
	return exitError
}
