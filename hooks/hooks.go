// Package hooks installs, removes and inspects the git hooks that keep the
// coding agent's config.json in step with the policy manifests, and holds the
// code that runs inside those hooks.
//
// Hooks are installed for post-checkout, post-merge and post-rewrite in each repository of
// a checkout (the root and every vendor/* overlay). Git 2.54 and later run
// hooks named in the repository's configuration:
//
//	[hook "agents-setup"]
//		event = post-checkout
//		event = post-merge
//		event = post-rewrite
//		command = /usr/local/bin/agents-setup --root /src/fuchsia hooks run --
//
// which other hook managers and jiri leave alone. Older git gets a script in
// the hooks directory (as `git rev-parse --git-path hooks` resolves it, so
// core.hooksPath and linked worktrees are honoured). A hook already there is
// moved aside to <event>.agents-setup-orig, run first by the script, and its
// exit status kept; the script carries a marker line, so installing twice
// changes nothing and uninstalling restores the original byte for byte.
//
// [Run] is the hook itself: it never fails a checkout, skips file checkouts,
// returns at once when the manifests have not changed, and collapses the
// many hooks a parallel jiri update fires into one reconcile.
package hooks

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// hookName is the hook's name in git's configuration: hook.agents-setup.*.
const hookName = "agents-setup"

// hookEvents are the git hook events installed, in order.
// post-rewrite fires after a rebase or an amend, which change the
// manifests as a checkout does; post-checkout fires during a rebase only
// for the first checkout of the upstream.
var hookEvents = []string{"post-checkout", "post-merge", "post-rewrite"}

// origSuffix is appended to the name of a hook that was in place before
// ours: post-checkout becomes post-checkout.agents-setup-orig.
const origSuffix = ".agents-setup-orig"

// marker starts the line that identifies a script as ours; the version after
// it changes when the script's shape changes.
const marker = "# agents-setup managed hook"

// ErrForeignHooksPath is returned by [Install] when core.hooksPath points
// outside the repository's own hooks directory and Options.Force is false.
var ErrForeignHooksPath = errors.New("core.hooksPath is shared with other repositories or tools")

// Options says which repositories to work on and what the hook runs.
type Options struct {
	// Repos are the work trees of the repositories: the checkout root,
	// then its overlays.
	Repos []string

	// Command is the hook command's argv; git's hook arguments follow it.
	// It is shell-quoted into the script or hook.agents-setup.command. The
	// usual one is {"/abs/path/agents-setup", "hooks", "run", "--"}.
	Command []string

	// StateDir keeps a record of the repositories hooks were installed in,
	// so that Status notices a hook someone removed. "" keeps no record.
	StateDir string

	// Force installs into a core.hooksPath that is not the repository's own
	// hooks directory.
	Force bool
}

// Method is how a hook is installed in a repository.
type Method int

const (
	// Script is a script in the repository's hooks directory.
	Script Method = iota
	// Config is hook.agents-setup.event and .command in the repository's
	// configuration (git 2.54 and later).
	Config
)

func (m Method) String() string {
	if m == Config {
		return "config"
	}
	return "script"
}

// State is the state of one hook in one repository.
type State int

const (
	// Missing: not installed.
	Missing State = iota
	// Installed: ours, current.
	Installed
	// Chained: ours, current, and a hook that was there before runs first.
	Chained
	// Stale: ours, but an outdated script or command; install updates it.
	Stale
	// Removed: installed once (recorded in the state directory, or the hook
	// we moved aside is still there) but ours is gone, as after a jiri
	// update that rewrote the hooks.
	Removed
)

func (s State) String() string {
	switch s {
	case Installed:
		return "installed"
	case Chained:
		return "installed, foreign hook chained"
	case Stale:
		return "stale"
	case Removed:
		return "removed"
	}
	return "missing"
}

// Change is one thing Install or Uninstall did, or found already done.
type Change struct {
	Repo   string // the repository's work tree
	Path   string // the file written, or the config key
	Action string // what was done: "installed", "unchanged", ...
}

func (c Change) String() string { return fmt.Sprintf("%s: %s: %s", c.Repo, c.Path, c.Action) }

// Report is the state of the hooks in one repository.
type Report struct {
	Repo     string
	Method   Method
	HooksDir string // where scripts go (Method Script) or are left over from
	Hooks    []HookReport
}

// HookReport is the state of the hook for one event.
type HookReport struct {
	Event  string
	Path   string // the script, or the config key
	State  State
	Detail string // what is wrong and how to fix it; "" when installed
}

// State is the worst of the repository's hook states, in the order Removed,
// Stale, Missing, Chained, Installed.
func (r Report) State() State {
	rank := map[State]int{Installed: 0, Chained: 1, Missing: 2, Stale: 3, Removed: 4}
	worst := Installed
	for _, h := range r.Hooks {
		if rank[h.State] > rank[worst] {
			worst = h.State
		}
	}
	return worst
}

// CommandLine shell-quotes argv into one command line.
func CommandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script is the hook script for event running command.
func script(event, command string) []byte {
	orig := `"$0` + origSuffix + `"`
	return []byte(`#!/bin/sh
` + marker + ` v1
# Keeps the coding agent's config.json in step with the policy manifests after
# git ` + strings.TrimPrefix(event, "post-") + `. Written by "agents-setup hooks install"; "agents-setup hooks
# uninstall" removes it and puts back the hook it replaced, if any.
# That hook was moved to ` + event + origSuffix + `: it runs first, and its exit
# status is this hook's. agents-setup itself never fails a ` + strings.TrimPrefix(event, "post-") + `.
status=0
if [ -x ` + orig + ` ]; then
	` + orig + ` "$@" || status=$?
fi
` + command + ` "$@" </dev/null || :
exit $status
`)
}

// isOurs reports whether a hook file's content carries our marker line.
func isOurs(content []byte) bool {
	for _, line := range strings.Split(string(content), "\n") {
		if strings.HasPrefix(line, marker) {
			return true
		}
	}
	return false
}

// HookCommand is the hook command for the agents-setup binary at exe:
// `exe [flags] hooks run --`, after which git's hook arguments follow.
// flags are agents-setup's own, for what the hook must not guess from the
// directory git runs it in: --root, and --config and --state-dir when given.
func HookCommand(exe string, flags ...string) []string {
	argv := append([]string{exe}, flags...)
	return append(argv, "hooks", "run", "--")
}

// WriteReports writes one line per repository and event, naming
// repositories relative to root ("." for root itself):
//
//	vendor/foo: post-checkout: removed (script; deleted (a jiri update?); run agents-setup hooks install)
func WriteReports(w io.Writer, root string, reports []Report) error {
	for _, r := range reports {
		name := r.Repo
		if rel, err := filepath.Rel(root, r.Repo); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		for _, h := range r.Hooks {
			detail := r.Method.String()
			if h.Detail != "" {
				detail += "; " + h.Detail
			}
			if _, err := fmt.Fprintf(w, "%s: %s: %s (%s)\n", name, h.Event, h.State, detail); err != nil {
				return err
			}
		}
	}
	return nil
}
