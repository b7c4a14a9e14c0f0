package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/setup"
	"github.com/agent-shim/agent-shim/internal/setupstate"
	"github.com/agent-shim/agent-shim/statefile"
	"github.com/urfave/cli/v2"
)

const hooksHelp = `Install git hooks that keep config.json in step with the manifests: after a
checkout, merge or rewrite (rebase, amend) in the checkout root or any
vendor/<x> repository, the hook re-applies the last applied profile and the ad-hoc rules (-a, -k, -d and the
--*-list files, kept by content) of the last manual run. It never fails a
checkout, never prompts, skips file checkouts, returns at once when the
manifests did not change, and logs errors to hooks.log in the state
directory. After --reset the hooks leave config.json alone until the next
manual run.

On git 2.54 and later the hooks are hook.agents-setup.* entries in each
repository's configuration; older git gets a script in the hooks directory,
which runs a hook already there first and keeps its exit status. A
core.hooksPath shared with other repositories is refused unless --force.

The hook command names this binary's path, the checkout root and, when given,
--config and --state-dir: install again after moving the binary. status exits
3 unless every repository's hooks are installed (or installed with a foreign
hook chained), 1 on an error.`

// helpFlag is each command's own --help: urfave's global one is shared
// state that concurrent runs would race on.
func helpFlag() cli.Flag {
	return &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show this help"}
}

// hooksCommand is "agents-setup hooks install|uninstall|status|run".
func (o *options) hooksCommand() *cli.Command {
	rootFlag := func() cli.Flag {
		return &cli.StringFlag{Name: "root", Usage: "the checkout root `DIR` (default: found from the current directory)"}
	}
	forceFlag := &cli.BoolFlag{Name: "force", Usage: "install into a core.hooksPath shared with other repositories"}
	return &cli.Command{
		Name:         "hooks",
		Usage:        "keep config.json in step on git checkout and merge",
		UsageText:    "agents-setup [--config FILE] [--state-dir DIR] hooks install|uninstall|status [--root DIR] [--force]",
		Description:  hooksHelp,
		HideHelp:     true,
		OnUsageError: onUsageError,
		Flags:        []cli.Flag{helpFlag()},
		Action: func(c *cli.Context) error {
			if c.Bool("help") {
				return cli.ShowSubcommandHelp(c)
			}
			if c.NArg() > 0 {
				return didYouMean(usagef("hooks: unknown command %q (commands: install, uninstall, status)", c.Args().First()),
					c.Args().First(), commandNames(c.Command.Subcommands), "agents-setup hooks ")
			}
			return usagef("hooks: want a command: install, uninstall or status")
		},
		Subcommands: []*cli.Command{
			{
				Name:         "install",
				Usage:        "install the hooks in the checkout root and every vendor/<x> repository",
				UsageText:    "agents-setup [--config FILE] [--state-dir DIR] hooks install [--root DIR] [--force]",
				HideHelp:     true,
				OnUsageError: onUsageError,
				Flags:        []cli.Flag{rootFlag(), forceFlag, helpFlag()},
				Action: o.hooksAction(func(ctx context.Context, root string, opts hooks.Options) error {
					if startedByGit() {
						return &hintError{Err: errStartedByGit, Hint: "run agents-setup hooks install yourself, from a shell"}
					}
					changes, err := hooks.Install(ctx, opts)
					o.printChanges(root, changes)
					if errors.Is(err, hooks.ErrForeignHooksPath) {
						return &hintError{Err: err, Hint: "core.hooksPath is shared; pass --force to install there"}
					}
					return err
				}),
			},
			{
				Name:         "uninstall",
				Usage:        "remove the hooks and put back the ones they replaced",
				UsageText:    "agents-setup [--config FILE] [--state-dir DIR] hooks uninstall [--root DIR]",
				HideHelp:     true,
				OnUsageError: onUsageError,
				Flags:        []cli.Flag{rootFlag(), helpFlag()},
				Action: o.hooksAction(func(ctx context.Context, root string, opts hooks.Options) error {
					if startedByGit() {
						return &hintError{Err: errStartedByGit, Hint: "run agents-setup hooks uninstall yourself, from a shell"}
					}
					changes, err := hooks.Uninstall(ctx, opts)
					o.printChanges(root, changes)
					return err
				}),
			},
			{
				Name:         "status",
				Usage:        "report the hooks of each repository; exit 3 unless all are installed",
				UsageText:    "agents-setup [--config FILE] [--state-dir DIR] hooks status [--root DIR]",
				HideHelp:     true,
				OnUsageError: onUsageError,
				Flags:        []cli.Flag{rootFlag(), helpFlag()},
				Action: o.hooksAction(func(ctx context.Context, root string, opts hooks.Options) error {
					reports, err := hooks.Status(ctx, opts)
					if err != nil {
						return err
					}
					if err := hooks.WriteReports(o.Stdout, root, reports); err != nil {
						return err
					}
					var bad []string
					for _, r := range reports {
						if s := r.State(); s != hooks.Installed && s != hooks.Chained {
							bad = append(bad, relName(root, r.Repo))
						}
					}
					if len(bad) > 0 {
						return &notInstalled{bad}
					}
					return nil
				}),
			},
			{
				// The hook itself: git runs it with the hook's arguments.
				Name:            "run",
				Hidden:          true,
				SkipFlagParsing: true,
				HideHelp:        true,
				Action:          o.hookRun,
			},
		},
	}
}

// hooksAction wraps the action of install, uninstall and status: it reads
// the subcommand's flags and finds the repositories.
func (o *options) hooksAction(do func(ctx context.Context, root string, opts hooks.Options) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Bool("help") {
			return cli.ShowSubcommandHelp(c)
		}
		if c.NArg() > 0 {
			return usagef("hooks %s: unexpected argument %q (flags go before arguments; this command takes none)", c.Command.Name, c.Args().First())
		}
		// --root may come before "hooks" (the app's flag, already in
		// o.root) or after the subcommand.
		if c.IsSet("root") {
			o.Root = c.String("root")
		}
		o.RootSet = o.Root != ""
		root, opts, err := o.hookOptions(c.Bool("force"))
		if err != nil {
			return err
		}
		return do(c.Context, root, opts)
	}
}

// hookOptions finds the checkout's repositories (the root, when it is one,
// then every vendor/<x> repository, sorted: all of them, since a checkout
// can add an overlay to any later) and the hook command, which names the
// root, and --config and --state-dir when given, so that the hook never
// guesses them from the repository git runs it in.
func (o *options) hookOptions(force bool) (string, hooks.Options, error) {
	root, err := o.FindRoot()
	if err != nil {
		return "", hooks.Options{}, err
	}
	if root == "" {
		return "", hooks.Options{}, &hintError{Err: errors.New("hooks: not inside a checkout (no .jiri_root or git repository)"), Hint: "run it from the checkout or give --root DIR"}
	}
	var repos []string
	if hasGit(root) {
		// A jiri root need not be a repository itself; asking git about
		// it then would find an enclosing one (a dotfiles repository in
		// the home directory) and install there.
		repos = append(repos, root)
	}
	ents, err := statefile.ReadDir(filepath.Join(root, "vendor"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", hooks.Options{}, fmt.Errorf("reading overlays: %w", err)
	}
	for _, e := range ents { // sorted by name
		dir := filepath.Join(root, "vendor", e.Name())
		if hasGit(dir) {
			repos = append(repos, dir)
		}
	}
	if len(repos) == 0 {
		return "", hooks.Options{}, fmt.Errorf("hooks: no git repository in %s or its vendor directory", root)
	}
	path, dir, err := o.Paths()
	if err != nil {
		return "", hooks.Options{}, err
	}
	exe, err := executable()
	if err != nil {
		return "", hooks.Options{}, fmt.Errorf("finding the agents-setup binary: %w", err)
	}
	// The config is always named: git runs hooks without the environment
	// that chose it here ($GEMINI_CONFIG_DIR, $GEMINI_HOME), and a hook
	// keeping another config in step would be worse than none.
	flags := []string{"--root", root, "--config", path}
	if o.StateDir != "" {
		flags = append(flags, "--state-dir", dir)
	}
	return root, hooks.Options{Repos: repos, Command: hooks.HookCommand(exe, flags...), StateDir: dir, Force: force}, nil
}

// verifyHooks refuses to act when a git hook script agents-setup installed
// for this config was changed since (hooks.Verify): such a script runs as
// the person at every checkout, and could run agents-setup to apply for
// them what a hook run would hold back.
func (o *options) verifyHooks() error {
	_, dir, err := o.Paths()
	if err != nil {
		return err
	}
	if err := hooks.Verify(dir); err != nil {
		return &hintError{Err: fmt.Errorf("%w (nothing written)", err), Hint: "read that script: git runs it as you at every checkout. Remove what is not yours, then run agents-setup hooks install"}
	}
	return nil
}

// executable is the path of this binary, links resolved, for the hook
// command; a test seam.
var executable = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// hasGit reports whether dir has a .git entry: a directory, or the file of
// a linked worktree or submodule.
func hasGit(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

func relName(root, repo string) string {
	if rel, err := filepath.Rel(root, repo); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return repo
}

func (o *options) printChanges(root string, changes []hooks.Change) {
	for _, c := range changes {
		if filepath.IsAbs(c.Path) {
			fmt.Fprintf(o.Stdout, "%s: %s\n", relName(root, c.Path), c.Action)
		} else { // a configuration key
			fmt.Fprintf(o.Stdout, "%s: %s: %s\n", relName(root, c.Repo), c.Path, c.Action)
		}
	}
}

// hookRun is the hook: it re-applies the saved profile and the recorded
// ad-hoc rules when the manifests changed. It always exits 0, since a
// failing post-checkout makes git and jiri report a failed checkout; errors
// go to hooks.log in the state directory, and a line on stderr.
func (o *options) hookRun(c *cli.Context) error {
	c.App.Reader = strings.NewReader("") // nothing ever prompts
	stderr := o.Stderr
	o.Stdout, o.Hook = io.Discard, true
	// The hook re-applies; flags of the other modes given before "hooks"
	// do not turn it into a dry run, an --init or a reset.
	o.DryRun, o.Init, o.Status, o.Reset, o.RollbackSet, o.ProfileSet = false, false, false, false, false, false
	args := c.Args().Slice()
	path, dir, err := o.Paths()
	if err != nil {
		// No state directory to log to.
		fmt.Fprintf(stderr, "agents-setup: hook: %v\n", err)
		return nil
	}
	o.RootSet = o.Root != ""
	if err := hooks.Verify(dir); err != nil {
		// A hook script was rewritten: this run may be its doing.
		hooks.Log(dir, "hook", err.Error()+"; nothing applied: read the script, then run agents-setup hooks install")
		fmt.Fprintf(stderr, "agents-setup: hook: %v; nothing applied (see %s)\n", err, hooks.LogPath(dir))
		return nil
	}
	root, rootErr := o.FindRoot()
	err = hooks.Run(c.Context, hooks.RunOptions{
		Args:     args,
		StateDir: dir,
		// The manifests, and state.json by stat: a manual run since the
		// hook's last apply may have applied other manifests (a hand
		// edit), which a checkout back to the hook's last ones must undo.
		// Every write of state.json is a rename, so its identity changes.
		Fingerprint: func() (string, error) {
			if rootErr != nil {
				return "", rootErr
			}
			if root == "" {
				return "", errors.New("not inside a checkout; install the hooks again")
			}
			fp, err := manifest.Fingerprint(root)
			if err != nil {
				return "", err
			}
			info, err := os.Stat(setupstate.Store{Dir: dir}.Path())
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("reading state: %w", err)
			}
			return path + "\x00" + setup.Identity(info) + "\x00" + fp, nil
		},
		Apply: func(ctx context.Context) error { return setup.Apply(ctx, &o.Options) },
	})
	if err != nil {
		fmt.Fprintf(stderr, "agents-setup: hook: %v (see %s)\n", err, hooks.LogPath(dir))
	}
	return nil
}
