package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("u", false, "update testscript golden files")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"agent-shim": func() {
			os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "xdg", "config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, "xdg", "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(work, "xdg", "cache"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(work, "xdg", "data"))
			env.Setenv("GEMINI_CONFIG_DIR", "")
			env.Setenv("GEMINI_HOME", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
		},
	})
}

// cmdExitcode runs a program and asserts its exact exit status:
// `exitcode 2 agent-shim explain` (testscript's `!` only means non-zero).
// Its stdout and stderr are kept for the commands that follow.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
