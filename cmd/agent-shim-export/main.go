package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/otlp"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// retry is how a run retries a refused request (a variable for the
// tests).
var retry = otlp.DefaultRetry

func main() { os.Exit(run(context.Background(), os.Args, os.Stderr)) }

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent-shim-export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	logPath := fs.String("log", "", "the decision log (default: $XDG_STATE_HOME/agent-shim/decisions.jsonl)")
	configPath := fs.String("config", "", "the config.json whose agentShim.telemetry configures the export (default: the agent's)")
	once := fs.Bool("once", false, "send what the log holds, then leave")
	idle := fs.Duration("idle", 0, "leave after this long with no new record (default: three intervals, at most a minute)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agent-shim-export: error: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *logPath == "" {
		p, err := decisionlog.Path(os.Getenv)
		if err != nil {
			fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
			return exitError
		}
		*logPath = p
	}
	if *configPath == "" {
		p, err := config.DefaultPath(os.Getenv)
		if err != nil {
			fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
			return exitError
		}
		*configPath = p
	}
	section, err := config.ReadTelemetry(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
		return exitError
	}
	settings := telemetry.Resolve(os.Getenv, section)
	if *idle <= 0 {
		*idle = min(3*settings.Interval, time.Minute)
	}
	if err := otlp.Export(ctx, otlp.Job{Log: *logPath, Once: *once, Idle: *idle, Settings: settings, Retry: retry}); err != nil {
		fmt.Fprintf(stderr, "agent-shim-export: error: %v\n", err)
		return exitError
	}
	return exitOK
}
