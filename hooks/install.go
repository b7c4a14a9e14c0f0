package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agent-shim/agent-shim/statefile"
)

// The configuration keys of config-based hooks, as git 2.54 documents them
// (Documentation/config/hook.adoc, git-hook(1)):
//
//   - hook.<name>.command: "The command to execute for hook.<name>. ... an
//     executable path or a shell oneliner"; the last value wins. Git runs it
//     through the shell with the hook's arguments appended (hook.c sets
//     use_shell and pushes the arguments after the command), so the command
//     must end where the arguments may follow: ours ends in "--".
//   - hook.<name>.event: "a multi-valued key. To run hook.<name> on multiple
//     events, specify the key more than once. An empty value resets the list".
//   - hook.<name>.enabled (default true) is left to the user.
//
// The configured hooks run first, then the hook in the hooks directory, so a
// hook jiri or another manager puts there keeps running beside ours.
const (
	keyCommand = "hook." + hookName + ".command"
	keyEvent   = "hook." + hookName + ".event"
	section    = "hook." + hookName
)

// repo is one repository as git sees it.
type repo struct {
	dir      string // the work tree, absolute
	hooksDir string // `git rev-parse --git-path hooks`, absolute
	ownHooks string // <git-common-dir>/hooks
	method   Method
}

// foreign reports whether the hooks directory is not the repository's own:
// a core.hooksPath shared with other repositories or tools.
func (r repo) foreign() bool { return !samePath(r.hooksDir, r.ownHooks) }

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// inspect asks git where dir's hooks live.
func inspect(ctx context.Context, dir string, m Method) (repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return repo{}, fmt.Errorf("resolving %s: %w", dir, err)
	}
	out, err := git(ctx, abs, "rev-parse", "--git-path", "hooks", "--git-common-dir")
	if err != nil {
		return repo{}, err
	}
	lines := bytes.Split([]byte(out), []byte("\n"))
	if len(lines) != 2 {
		return repo{}, fmt.Errorf("running git rev-parse in %s: unexpected output %q", abs, out)
	}
	return repo{
		dir:      abs,
		hooksDir: absJoin(abs, string(lines[0])),
		ownHooks: filepath.Join(absJoin(abs, string(lines[1])), "hooks"),
		method:   m,
	}, nil
}

// method picks the install method the installed git supports.
func method(ctx context.Context) (Method, error) {
	v, err := gitVersion(ctx)
	if err != nil {
		return Script, err
	}
	if v.less(configHooksSince) {
		return Script, nil
	}
	return Config, nil
}

func inspectAll(ctx context.Context, opts Options) ([]repo, error) {
	if len(opts.Repos) == 0 {
		return nil, errors.New("no repositories given")
	}
	m, err := method(ctx)
	if err != nil {
		return nil, err
	}
	var repos []repo
	for _, dir := range opts.Repos {
		r, err := inspect(ctx, dir, m)
		if err != nil {
			return nil, err
		}
		repos = append(repos, r)
	}
	return repos, nil
}

// planned remembers the hooks directories and repository configurations
// already planned. Linked worktrees share their main repository's
// configuration and hooks directory, and one core.hooksPath may serve many
// repositories: planning the same file twice would move our own script aside
// as the "original".
type planned struct{ scripts, configs map[string]bool }

// add records r and says whether its hooks directory and its configuration
// (kept in the common directory, which ownHooks is named after) are new.
func (p *planned) add(r repo) (script, config bool) {
	if p.scripts == nil {
		p.scripts, p.configs = map[string]bool{}, map[string]bool{}
	}
	script, config = !p.scripts[r.hooksDir], !p.configs[r.ownHooks]
	p.scripts[r.hooksDir], p.configs[r.ownHooks] = true, true
	return script, config
}

// step is one planned change: Install and Uninstall first plan every
// repository, so that a refusal anywhere writes nothing anywhere.
type step struct {
	change Change
	do     func() error // nil when there is nothing to do
}

// Install installs the hooks in every repository of opts.Repos. It changes
// nothing when they are already installed and current. A foreign
// core.hooksPath without opts.Force, or a foreign hook where a moved-aside
// original already waits, stops it before anything is written.
func Install(ctx context.Context, opts Options) ([]Change, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("no hook command given")
	}
	repos, err := inspectAll(ctx, opts)
	if err != nil {
		return nil, err
	}
	command := CommandLine(opts.Command)
	var steps []step
	var seen planned
	for _, r := range repos {
		if r.method == Script && r.foreign() && !opts.Force {
			return nil, fmt.Errorf("installing hooks in %s: %w: %s (the repository's own is %s); use --force to install there anyway",
				r.dir, ErrForeignHooksPath, r.hooksDir, r.ownHooks)
		}
		doScript, doConfig := seen.add(r)
		var s []step
		var err error
		switch {
		case r.method == Config && doConfig:
			s, err = planConfigInstall(ctx, r, command)
		case r.method == Script && doScript:
			s, err = planScriptInstall(r, command)
		}
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
		// Remove what the other method left: both would run once git
		// supports config-based hooks.
		switch {
		case r.method == Config && doScript:
			s, err = planScriptUninstall(r)
			for i := range s {
				s[i].change.Action += " (git " + configHooksSince.String() + " runs hook." + hookName + " from the configuration)"
			}
		case r.method == Script && doConfig:
			s, err = planConfigUninstall(ctx, r)
		default:
			s = nil
		}
		if err != nil {
			return nil, err
		}
		for _, st := range s {
			if st.do != nil {
				steps = append(steps, st)
			}
		}
	}
	changes, err := runSteps(steps)
	if err != nil {
		return changes, err
	}
	scripts := map[string]map[string]scriptRecord{}
	for _, r := range repos {
		if scripts[r.dir], err = recordScripts(r); err != nil {
			return changes, err
		}
	}
	if err := updateRecord(ctx, opts.StateDir, func(rec *record) {
		for _, r := range repos {
			rec.Repos[r.dir] = recordEntry{Method: r.method.String(), HooksDir: r.hooksDir, Scripts: scripts[r.dir]}
		}
	}); err != nil {
		return changes, err
	}
	return changes, nil
}

// Uninstall removes our hooks from every repository of opts.Repos, by both
// methods (git may have been upgraded since the install), and puts back the
// hooks that were moved aside, byte for byte and with their mode.
func Uninstall(ctx context.Context, opts Options) ([]Change, error) {
	repos, err := inspectAll(ctx, opts)
	if err != nil {
		return nil, err
	}
	var steps []step
	var seen planned
	for _, r := range repos {
		doScript, doConfig := seen.add(r)
		if doConfig {
			s, err := planConfigUninstall(ctx, r)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
		if doScript {
			s, err := planScriptUninstall(r)
			if err != nil {
				return nil, err
			}
			steps = append(steps, s...)
		}
	}
	changes, err := runSteps(steps)
	if err != nil {
		return changes, err
	}
	if err := updateRecord(ctx, opts.StateDir, func(rec *record) {
		for _, r := range repos {
			delete(rec.Repos, r.dir)
		}
	}); err != nil {
		return changes, err
	}
	return changes, nil
}

func runSteps(steps []step) ([]Change, error) {
	var changes []Change
	for _, s := range steps {
		if s.do != nil {
			if err := s.do(); err != nil {
				return changes, err
			}
		}
		changes = append(changes, s.change)
	}
	return changes, nil
}

func planScriptInstall(r repo, command string) ([]step, error) {
	var steps []step
	for _, event := range hookEvents {
		path := filepath.Join(r.hooksDir, event)
		orig := path + origSuffix
		want := script(event, command)
		change := Change{Repo: r.dir, Path: path}
		origExists, err := exists(orig)
		if err != nil {
			return nil, err
		}
		have, err := readHook(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			change.Action = "installed"
			if origExists {
				change.Action = "reinstalled (its original is still at " + orig + ")"
			}
			steps = append(steps, step{change, func() error { return writeHook(path, want) }})
		case err != nil:
			return nil, err
		case isOurs(have):
			if bytes.Equal(have, want) && isExecutable(path) {
				change.Action = "unchanged"
				steps = append(steps, step{change: change})
				continue
			}
			change.Action = "updated"
			steps = append(steps, step{change, func() error { return writeHook(path, want) }})
		case origExists:
			return nil, fmt.Errorf("installing hooks in %s: %s is not agents-setup's hook and %s already holds the hook it once replaced; move one of them away and install again",
				r.dir, path, orig)
		default:
			change.Action = "installed; the hook that was there moved to " + orig + " and runs first"
			steps = append(steps, step{change, func() error {
				if err := os.Rename(path, orig); err != nil {
					return fmt.Errorf("moving hook aside: %w", err)
				}
				if err := writeHook(path, want); err != nil {
					if rerr := os.Rename(orig, path); rerr != nil {
						return fmt.Errorf("%w; and putting back %s: %v", err, path, rerr)
					}
					return err
				}
				return nil
			}})
		}
	}
	return steps, nil
}

func planScriptUninstall(r repo) ([]step, error) {
	var steps []step
	for _, event := range hookEvents {
		path := filepath.Join(r.hooksDir, event)
		orig := path + origSuffix
		change := Change{Repo: r.dir, Path: path}
		origExists, err := exists(orig)
		if err != nil {
			return nil, err
		}
		have, err := readHook(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !origExists {
				continue
			}
			change.Action = "restored the original hook"
			steps = append(steps, step{change, func() error { return rename(orig, path) }})
		case err != nil:
			return nil, err
		case !isOurs(have):
			if origExists {
				change.Action = "left alone: not agents-setup's hook; the hook agents-setup replaced is still at " + orig
				steps = append(steps, step{change: change})
			}
		case origExists:
			change.Action = "restored the original hook"
			steps = append(steps, step{change, func() error { return rename(orig, path) }})
		default:
			change.Action = "removed"
			steps = append(steps, step{change, func() error {
				if err := os.Remove(path); err != nil {
					return fmt.Errorf("removing hook: %w", err)
				}
				return nil
			}})
		}
	}
	return steps, nil
}

// configState reads hook.agents-setup.command and .event.
func configState(ctx context.Context, r repo) (commands, events []string, err error) {
	commands, err = gitConfigAll(ctx, r.dir, keyCommand)
	if err != nil {
		return nil, nil, err
	}
	events, err = gitConfigAll(ctx, r.dir, keyEvent)
	return commands, events, err
}

func planConfigInstall(ctx context.Context, r repo, command string) ([]step, error) {
	commands, events, err := configState(ctx, r)
	if err != nil {
		return nil, err
	}
	change := Change{Repo: r.dir, Path: section}
	var steps []step
	switch {
	case slices.Equal(commands, []string{command}) && slices.Equal(events, hookEvents):
		change.Action = "unchanged"
		steps = append(steps, step{change: change})
	default:
		change.Action = "installed"
		if len(commands)+len(events) > 0 {
			change.Action = "updated"
		}
		steps = append(steps, step{change, func() error {
			if _, err := git(ctx, r.dir, "config", "--local", "--replace-all", keyCommand, command); err != nil {
				return err
			}
			if len(events) > 0 {
				if _, err := git(ctx, r.dir, "config", "--local", "--unset-all", keyEvent); err != nil {
					return err
				}
			}
			for _, e := range hookEvents {
				if _, err := git(ctx, r.dir, "config", "--local", "--add", keyEvent, e); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	return steps, nil
}

func planConfigUninstall(ctx context.Context, r repo) ([]step, error) {
	commands, events, err := configState(ctx, r)
	if err != nil {
		return nil, err
	}
	if len(commands)+len(events) == 0 {
		return nil, nil
	}
	return []step{{Change{Repo: r.dir, Path: section, Action: "removed"}, func() error {
		_, err := git(ctx, r.dir, "config", "--local", "--remove-section", section)
		return err
	}}}, nil
}

// readHook reads a hook file; a symbolic link is read as itself, never
// followed, since it is only ever moved.
func readHook(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading hook: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil // a link, or something odd: never ours
	}
	b, err := statefile.ReadRegular(path, statefile.MaxSmall)
	if err != nil {
		return nil, fmt.Errorf("reading hook: %w", err)
	}
	return b, nil
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking hook: %w", err)
	}
	return true, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&0o111 == 0o111
}

func rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("restoring hook: %w", err)
	}
	return nil
}

// writeHook writes an executable hook atomically: a temporary file in the
// same directory, renamed over the hook.
func writeHook(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing hook: %w", err)
	}
	if err := statefile.WriteAtomic(path, content, 0o755); err != nil {
		return fmt.Errorf("writing hook: %w", err)
	}
	// WriteAtomic keeps the mode of a file it replaces; a hook must run.
	return os.Chmod(path, 0o755)
}
