package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/setup"
	"github.com/agent-shim/agent-shim/internal/usage"
	"github.com/urfave/cli/v2"
)

// Exit codes; see doc.go.
const (
	exitOK           = 0
	exitError        = 1 // bad input (config, state, manifest), I/O, lock
	exitUsage        = 2 // bad flags, unknown profile, conflicting modes
	exitNotInstalled = 3 // hooks status: some hooks are not installed
)

// notInstalled is "hooks status" finding hooks missing, stale or
// removed: a state to report, not an error (exit 3).
type notInstalled struct{ repos []string }

func (e *notInstalled) Error() string {
	return "hooks not installed in " + strings.Join(e.repos, ", ")
}

func main() { os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)) }

// Test seams: the clock and the service restarter.
var (
	now     = time.Now
	restart = setup.SystemctlRestart
)

type (
	usageError = setup.UsageError
	hintError  = setup.HintError
)

var usagef = setup.Usagef

// run is main without the process: tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var opts options
	app := newApp(&opts, stdin, stdout, stderr)
	err := app.RunContext(ctx, fixRollback(args))
	if err == nil {
		return exitOK
	}
	var ni *notInstalled
	if errors.As(err, &ni) {
		fmt.Fprintf(stderr, "agents-setup: %v\n", err)
		fmt.Fprintf(stderr, "agents-setup: hint: run agents-setup hooks install\n")
		return exitNotInstalled
	}
	fmt.Fprintf(stderr, "agents-setup: error: %v\n", err)
	var hint *hintError
	if errors.As(err, &hint) {
		fmt.Fprintf(stderr, "agents-setup: hint: %s\n", hint.Hint)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if hint == nil {
			fmt.Fprintf(stderr, "agents-setup: hint: see agents-setup --help\n")
		}
		return exitUsage
	}
	return exitError
}

// onUsageError makes the flag package's errors usage errors, naming the
// flag meant when one was mistyped.
func onUsageError(c *cli.Context, err error, _ bool) error {
	ue := &usageError{Msg: err.Error()}
	// The flag package's own words (urfave's suggestions read them too).
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ue
	}
	ue.Msg = "unknown flag " + name
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	}
	var known []string
	for _, f := range flags {
		known = append(known, f.Names()...)
	}
	if m := usage.Closest(strings.TrimLeft(name, "-"), known); m != "" {
		return &hintError{Err: ue, Hint: "did you mean --" + m + "?"}
	}
	return ue
}

// didYouMean adds to err the hint of the word of known closest to got,
// if one is close; prefix is what comes before it in the hint.
func didYouMean(err error, got string, known []string, prefix string) error {
	if m := usage.Closest(got, known); m != "" {
		return &hintError{Err: err, Hint: "did you mean '" + prefix + m + "'?"}
	}
	return err
}

func commandNames(cs []*cli.Command) []string {
	var out []string
	for _, c := range cs {
		if !c.Hidden {
			out = append(out, c.Names()...)
		}
	}
	return out
}

// fixRollback lets --rollback take an optional count, which the flag
// package cannot express: "--rollback" alone becomes "--rollback=1" and
// "--rollback N" becomes "--rollback=N".
func fixRollback(args []string) []string {
	out := append([]string(nil), args[:min(1, len(args))]...)
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a != "--rollback" && a != "-rollback" {
			out = append(out, a)
			continue
		}
		n := "1"
		if i+1 < len(args) {
			if _, err := strconv.Atoi(args[i+1]); err == nil {
				n = args[i+1]
				i++
			}
		}
		out = append(out, "--rollback="+n)
	}
	return out
}

// options are the command line, parsed, for package setup.
type options struct{ setup.Options }

const helpText = `Turn the permission manifests of a checkout into the agent's config.json.

Manifests are .agents/config/permissions/<category>.txt files in the checkout
root and in each vendor/<x> repository (one command line per rule). The
profile decides which categories are allowed, asked or denied; the grants go
to userSettings.globalPermissionGrants, and the shim's rules to "agentShim".
Grants added to config.json by hand are kept. Outside a checkout, the
built-in default manifests are used (or only the ad-hoc rules, when given).

Ad-hoc rules (-a, -k, -d and the --*-list files) count as managed: a later run
without them removes them. To keep a rule for good, add it to config.json by
hand or to a manifest. The git hooks ("agents-setup hooks install") re-apply
the ad-hoc rules of the last manual run, as recorded then (list files by their
content at that time), with the last applied profile.

Profiles: ` + "read-only, local-changes (default), external-changes, full-access." + `
The profile defaults to the last one applied.`

func newApp(o *options, stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	o.Stdout, o.Stderr = stdout, stderr
	o.Now = func() time.Time { return now() }
	o.Restart = func(ctx context.Context, services []string, w io.Writer) error { return restart(ctx, services, w) }
	return &cli.App{
		Name:            "agents-setup",
		Usage:           "write the agent permission policy of a checkout into config.json",
		UsageText:       "agents-setup [flags]\n   agents-setup [--config FILE] [--state-dir DIR] hooks install|uninstall|status [--root DIR] [--force]",
		Description:     helpText,
		HideHelpCommand: true,
		// The package's global help flag is shared state that concurrent
		// runs (tests call run in parallel) would race on: use our own.
		HideHelp:                  true,
		DisableSliceFlagSeparator: true,
		UseShortOptionHandling:    false,
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		ExitErrHandler:            func(*cli.Context, error) {},
		HideVersion:               true, // our own --version: urfave's flag is shared state
		OnUsageError:              onUsageError,
		Commands:                  []*cli.Command{o.hooksCommand()},
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "`PROFILE`: " + strings.Join(manifest.Profiles, ", "), Destination: &o.Profile},
			&cli.StringSliceFlag{Name: "allow", Aliases: []string{"a"}, Usage: "allow `CMD` (ad-hoc rule, repeatable)"},
			&cli.StringSliceFlag{Name: "ask", Aliases: []string{"k"}, Usage: "ask before `CMD` (ad-hoc rule, repeatable)"},
			&cli.StringSliceFlag{Name: "deny", Aliases: []string{"d"}, Usage: "deny `CMD` (ad-hoc rule, repeatable)"},
			&cli.StringSliceFlag{Name: "allow-list", Usage: "allow the rules in `FILE` (repeatable)"},
			&cli.StringSliceFlag{Name: "ask-list", Usage: "ask before the rules in `FILE` (repeatable)"},
			&cli.StringSliceFlag{Name: "deny-list", Usage: "deny the rules in `FILE` (repeatable)"},
			&cli.StringFlag{Name: "config", Usage: "the agent's config `FILE` (default $GEMINI_CONFIG_DIR/config.json, $GEMINI_HOME/config/config.json or ~/.gemini/config/config.json)", Destination: &o.Config},
			&cli.StringFlag{Name: "state-dir", Usage: "keep state and backups in `DIR` (default $XDG_STATE_HOME/agents-setup/<config>)", Destination: &o.StateDir},
			&cli.StringFlag{Name: "root", Usage: "the checkout root `DIR` (default: found from the current directory)", Destination: &o.Root},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes per list without writing anything", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "init", Usage: "write the built-in default manifests into the checkout for editing, then apply", Destination: &o.Init},
			&cli.BoolFlag{Name: "status", Usage: "print the profile, grant counts, manifest files and recent history", Destination: &o.Status},
			&cli.IntFlag{Name: "rollback", Usage: "restore config.json from before the last `N` applies (default 1)", Destination: &o.Rollback},
			&cli.BoolFlag{Name: "reset", Usage: "remove the managed grants and rules, keeping the ones added by hand", Destination: &o.Reset},
			&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show this help"},
			&cli.BoolFlag{Name: "version", Usage: "print the version and the commit it was built from"},
		}, freshFlags(checkFlags)...), // policy tests and lint (check.go)
		Action: func(c *cli.Context) error {
			if c.Bool("help") {
				return cli.ShowAppHelp(c)
			}
			if c.Bool("version") {
				_, err := fmt.Fprintln(stdout, usage.Version("agents-setup"))
				return err
			}
			if c.NArg() > 0 {
				return didYouMean(usagef("unexpected argument %q (flags go before arguments; this command takes none)", c.Args().First()),
					c.Args().First(), commandNames(c.App.Commands), "agents-setup ")
			}
			if c.Bool("check") || c.Bool("lint") {
				return policyChecks(c) // check.go
			}
			o.JSON = c.Bool("json")
			o.Allow, o.Ask, o.Deny = c.StringSlice("allow"), c.StringSlice("ask"), c.StringSlice("deny")
			o.AllowLists, o.AskLists, o.DenyLists = c.StringSlice("allow-list"), c.StringSlice("ask-list"), c.StringSlice("deny-list")
			o.ProfileSet, o.RollbackSet, o.RootSet = c.IsSet("profile"), c.IsSet("rollback"), c.IsSet("root")
			if !o.DryRun && !o.Status {
				if err := o.verifyHooks(); err != nil {
					return err
				}
				if startedByGit() {
					return &hintError{Err: errStartedByGit, Hint: "run agents-setup yourself, from a shell"}
				}
			}
			return setup.Run(c.Context, &o.Options)
		},
	}
}

// freshFlags copies flags kept in package variables: urfave/cli writes
// into a flag while it parses (HasBeenSet, the value), so two runs at once
// (the tests run many) must not share one.
func freshFlags(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			c := *f
			out[i] = &c
		case *cli.StringFlag:
			c := *f
			out[i] = &c
		default:
			out[i] = f
		}
	}
	return out
}
