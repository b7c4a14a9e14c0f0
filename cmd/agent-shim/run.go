package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

// Exit codes. They are a contract: see doc.go.
const (
	exitOK     = 0   // the command ran; for explain, whatever the verdict
	exitError  = 1   // bad configuration or an internal error
	exitUsage  = 2   // bad command line
	exitDenied = 126 // shell mode refused to run the command
)

// usageError marks errors in how the program was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// env is the process environment; tests replace it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	app := &cli.App{
		Name:      "agent-shim",
		Usage:     "decide what an AI agent's shell commands may do",
		UsageText: "agent-shim explain [--json] [--config FILE] [--] '<command line>'",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// urfave/cli would call os.Exit on an exit error: errors are
		// mapped to exit codes below instead.
		ExitErrHandler:  func(*cli.Context, error) {},
		HideHelpCommand: true,
		Commands: []*cli.Command{
			e.explainCommand(),
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return &usageError{msg: err.Error()}
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("unknown command %q", c.Args().First())
			}
			cli.ShowAppHelp(c)
			return usagef("no command given")
		},
	}
	err := app.RunContext(ctx, args)
	return e.exitCode(err)
}

func (e *env) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "agent-shim: error: %v\n", err)
		fmt.Fprintf(e.stderr, "agent-shim: hint: run 'agent-shim --help' for usage\n")
		return exitUsage
	}
	fmt.Fprintf(e.stderr, "agent-shim: error: %v\n", err)
	return exitError
}
