package runlayer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/supervisor"
	"github.com/agent-shim/agent-shim/statefile"
)

// What a line a person approved may do under the layer beyond any other
// line (docs/runtime.md) comes from its approval alone (gate.Approval:
// Writable, Privileged), which the gate read from the line's own words:
//
//   - the paths it writes (a redirection, what a program is known to
//     write), and the per-user install directories of an approved
//     per-user install (pip install --user: the user base's lib and bin,
//     made when missing), where they exist: Landlock grants rights on files that
//     exist, and the parent of a file still to be made would lend every
//     file beside it. Never a path that holds the home directory, nor
//     agent-shim's own state and config.json: what decides is never the
//     tree's, approved or not;
//   - when a privilege runner (sudo, doas, pkexec, su, run0) runs one of
//     its commands: the capabilities the supervisor has, set-user-ID
//     programs that work, and writes confined nowhere. A supervisor that
//     cannot lend them (not root) refuses the line: it does not run it
//     unsupervised.
//
// The grant holds for the line's whole tree (Landlock and capabilities
// pass to what a process starts), and each execution in it is still
// decided: the approval covers the line's own commands only.

// grant is what the line's approval lends it (nothing without one), and
// what of the approval it does not lend, with why.
func (r *Run) grant() (g supervisor.Grant, withheld []string) {
	ap := r.Approval
	if ap == nil {
		return supervisor.Grant{}, nil
	}
	g.Privileged = ap.Privileged
	home := r.Getenv("HOME")
	var shim []string
	if s, err := statefile.StateHome(r.Getenv); err == nil {
		shim = append(shim, filepath.Join(s, "agent-shim"))
	}
	if r.Config != "" {
		shim = append(shim, r.Config)
	}
	for _, p := range append(slices.Clone(ap.Writable), r.userInstallDirs(ap)...) {
		p = filepath.Clean(p)
		switch {
		case !filepath.IsAbs(p):
			continue
		case p == "/" || filepath.IsAbs(home) && within(filepath.Clean(home), p):
			withheld = append(withheld, p+" holds the home directory")
			continue
		case slices.ContainsFunc(shim, func(s string) bool { return within(s, p) || within(p, s) }):
			withheld = append(withheld, p+" is agent-shim's own")
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			withheld = append(withheld, p+" does not exist yet (create it first, or run the line yourself)")
			continue
		}
		if !slices.Contains(g.Writable, p) {
			g.Writable = append(g.Writable, p)
		}
	}
	return g, withheld
}

// privilegedRefusal is the error of a line whose approval lends it
// privileges that this supervisor cannot keep.
func privilegedRefusal(err error) error {
	if !errors.Is(err, supervisor.ErrPrivileged) {
		return err
	}
	return &Hinted{fmt.Errorf("the approved line runs a program that gains privileges (sudo, doas, pkexec, su, run0), and %w", err),
		"run the line yourself, outside the agent"}
}

// reportWithheld says, for a line that failed, what of its approval the
// layer did not lend it.
func (r *Run) reportWithheld(withheld []string) {
	for _, w := range withheld {
		fmt.Fprintf(r.Stderr, "agent-shim: note: the approval of the line does not let it write here under the run-time layer: %s\n", w)
	}
}

// userInstallDirs are the directories an approved per-user install
// writes that its line does not name: `pip install --user` (pip, pip3,
// pip3.12, python3 -m pip) writes the user base's lib and bin
// ($PYTHONUSERBASE, else ~/.local), made here when missing. Not the user
// base itself: ~/.local holds agent-shim's state.
func (r *Run) userInstallDirs(ap *gate.Approval) []string {
	for _, cmd := range ap.Commands {
		argv := make([]string, 0, len(cmd))
		for _, w := range cmd {
			if !w.Static {
				break
			}
			argv = append(argv, w.Text)
		}
		if !pipUserInstall(argv) {
			continue
		}
		base := r.Getenv("PYTHONUSERBASE")
		if !filepath.IsAbs(base) {
			home := r.Getenv("HOME")
			if !filepath.IsAbs(home) {
				return nil
			}
			base = filepath.Join(home, ".local")
		}
		dirs := []string{filepath.Join(base, "lib"), filepath.Join(base, "bin")}
		for _, d := range dirs {
			os.MkdirAll(d, 0o755)
		}
		return dirs
	}
	return nil
}

// pipUserInstall reports whether argv is pip install --user.
func pipUserInstall(argv []string) bool {
	isPip := func(name, prefix string) bool {
		rest, ok := strings.CutPrefix(filepath.Base(name), prefix)
		return ok && strings.Trim(rest, "0123456789.") == ""
	}
	switch {
	case len(argv) > 0 && isPip(argv[0], "pip"):
		argv = argv[1:]
	case len(argv) > 2 && isPip(argv[0], "python") && argv[1] == "-m" && isPip(argv[2], "pip"):
		argv = argv[3:]
	default:
		return false
	}
	i := slices.IndexFunc(argv, func(a string) bool { return !strings.HasPrefix(a, "-") })
	return i >= 0 && argv[i] == "install" && slices.Contains(argv[i+1:], "--user")
}
