package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/verify"
)

const (
	exitOK    = 0
	exitRed   = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr))
}

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent-shim verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	verbose := fs.Bool("v", false, "print each run's output of the agent on stderr")
	timeout := fs.Duration("timeout", verify.DefaultTimeout, "bound each run of the agent")
	parallel := fs.Int("parallel", 2, "run this many checks at once")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agent-shim verify [--json] [-v] [--timeout D] [--parallel N] %s\n", agents.Names("|"))
	}
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "agent-shim: error: verify takes one agent: %s\n", agents.Names(", "))
		return exitUsage
	}
	a := agents.ByName(fs.Arg(0))
	if a == nil {
		fmt.Fprintf(stderr, "agent-shim: error: verify: unknown agent %q (agents: %s)\n", fs.Arg(0), agents.Names(", "))
		return exitUsage
	}
	program, err := exec.LookPath(a.Program)
	if err != nil {
		fmt.Fprintf(stderr, "agent-shim: error: verify: %s is not on PATH: %v\n", a.Program, err)
		fmt.Fprintf(stderr, "agent-shim: hint: verify runs the %s you have; install it, or put it on PATH\n", a.Title)
		return exitRed
	}
	o := verify.Options{Agent: a, Program: program, Getenv: getenv, Timeout: *timeout, Parallel: *parallel}
	if *verbose {
		o.Log = stderr
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "agent-shim verify: %s (%s), headless against a scripted model on 127.0.0.1, in a temporary home\n", a.Title, program)
	}
	r, err := verify.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "agent-shim: error: verify: %v\n", err)
		return exitRed
	}
	if *asJSON {
		data, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintf(stdout, "%s\n", data)
	} else {
		if r.Version != "" {
			fmt.Fprintf(stdout, "  %s, `%s --version`\n", r.Version, a.Program)
		}
		fmt.Fprintf(stdout, "  the hook as installed in %s\n", r.Settings)
		for _, c := range r.Checks {
			st := "ok"
			if !c.OK {
				st = "FAIL"
			}
			fmt.Fprintf(stdout, "  %-4s  %s: %s\n", st, c.Name, c.Detail)
		}
	}
	if failed := r.Failed(); len(failed) > 0 {
		fmt.Fprintf(stderr, "agent-shim: verify: red: %s failed (%s, %s)\n", strings.Join(failed, ", "), a.Title, r.Version)
		return exitRed
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "agent-shim verify: green: the hook holds as installed (%s, %s)\n", a.Title, r.Version)
	}
	return exitOK
}
