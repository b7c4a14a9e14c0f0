package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
)

// RunOptions configure one hook run.
type RunOptions struct {
	// Args are git's hook arguments: three for post-checkout (the previous
	// HEAD, the new HEAD, and 1 for a branch checkout or 0 for a file
	// checkout), one for post-merge (1 for a squash merge) and one for
	// post-rewrite ("amend" or "rebase"; the rewritten commits it gets on
	// stdin are not read). No arguments
	// reconciles as if a hook had fired. A leading "--" is dropped.
	Args []string

	// StateDir holds the run lock, the dirty marker, the fingerprint of the
	// last apply and the log. Two checkouts that share it share one
	// fingerprint: correct, but each re-applies after the other.
	StateDir string

	// Fingerprint returns a digest of everything Apply reads (the
	// manifests' contents, the saved profile). It must be cheap: an
	// unchanged fingerprint is the whole of a hook run.
	Fingerprint func() (string, error)

	// Apply re-applies the saved profile, quietly, never prompting.
	Apply func(ctx context.Context) error
}

// The files of a hook run, in the state directory.
const (
	runLockName     = "hook-run" // the lock is hook-run.lock (statefile.LockPath)
	dirtyFile       = "hook-run.dirty"
	fingerprintFile = "hook-run.fingerprint"
	logFile         = "hooks.log"
	logMax          = 256 << 10 // bytes; the log is rotated to hooks.log.1 past it
)

// LogPath is the file Run appends its errors to.
func LogPath(stateDir string) string { return filepath.Join(stateDir, logFile) }

// now is the clock of the log; tests replace it.
var now = time.Now

// Run is the hook: it re-applies the saved profile when the manifests have
// changed since the last apply. Its error is for the log only: the caller
// exits 0 whatever it returns, since a failing post-checkout makes git and
// jiri report a failed checkout. Run has already appended the error to
// [LogPath].
//
// Before anything else it unsets git's per-repository environment
// ([localEnvVars]) in the process, since the hook of one repository goes on
// to read the others. It skips file checkouts (post-checkout's flag 0).
//
// jiri checks out many projects in parallel, each firing the hook. Their runs
// collapse into one reconcile: a run whose fingerprint matches the last apply
// returns at once; otherwise it marks the state dirty and tries the run lock
// without waiting. A run that finds it busy leaves; the holder re-reads the
// fingerprint after each apply and applies again until it holds still, and
// after unlocking looks for the dirty mark once more, so that the last change
// is always applied after it was made, and applies never overlap.
func Run(ctx context.Context, opts RunOptions) error {
	unsetLocalEnv()
	event, skip, err := parseArgs(opts.Args)
	if err == nil && !skip {
		err = run(ctx, opts)
	}
	if err != nil {
		if lerr := appendLog(opts.StateDir, event, err); lerr != nil {
			return fmt.Errorf("%w (and %v)", err, lerr)
		}
	}
	return err
}

// parseArgs names the event from git's arguments, and says whether to skip
// it: a post-checkout of files rather than a branch.
func parseArgs(args []string) (event string, skip bool, err error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:] // left by a command line parser that kept it
	}
	switch len(args) {
	case 0:
		return "run", false, nil
	case 1:
		if args[0] == "amend" || args[0] == "rebase" {
			return "post-rewrite", false, nil
		}
		return "post-merge", false, nil
	case 3:
		return "post-checkout", args[2] == "0", nil
	}
	return "hook", false, fmt.Errorf("running hook: want post-checkout's 3 arguments or post-merge's or post-rewrite's 1, got %d: %q", len(args), args)
}

func run(ctx context.Context, opts RunOptions) error {
	if opts.StateDir == "" || opts.Fingerprint == nil || opts.Apply == nil {
		return errors.New("running hook: no state directory, fingerprint or apply given")
	}
	// A run killed while it wrote the fingerprint left a temporary file;
	// its writer is dead, so it goes now, lock or no lock.
	statefile.SweepDead(filepath.Join(opts.StateDir, fingerprintFile))
	fp, err := opts.Fingerprint()
	if err != nil {
		return fmt.Errorf("fingerprinting manifests: %w", err)
	}
	if last, _ := readFingerprint(opts.StateDir); last == fp {
		return nil
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	// The run lock never waits (statefile.TryLock): a run that finds it
	// taken leaves the work to its holder.
	lockOf := filepath.Join(opts.StateDir, runLockName)
	dirty := filepath.Join(opts.StateDir, dirtyFile)
	for {
		// Mark first, lock second: a holder that is about to unlock
		// finds the mark after unlocking and comes back for it.
		if err := os.WriteFile(dirty, nil, 0o600); err != nil {
			return fmt.Errorf("marking state dirty: %w", err)
		}
		unlock, err := statefile.TryLock(lockOf)
		if errors.Is(err, statefile.ErrLocked) {
			return nil // the holder applies for us
		}
		if err != nil {
			return fmt.Errorf("locking hook run: %w", err)
		}
		err = drain(ctx, opts)
		if uerr := unlock(); err == nil && uerr != nil {
			err = fmt.Errorf("unlocking hook run: %w", uerr)
		}
		if err != nil {
			return err
		}
		if _, err := os.Stat(dirty); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
}

// drain applies, under the run lock, until the fingerprint holds still.
func drain(ctx context.Context, opts RunOptions) error {
	dirty := filepath.Join(opts.StateDir, dirtyFile)
	fpPath := filepath.Join(opts.StateDir, fingerprintFile)
	for {
		if err := os.Remove(dirty); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clearing dirty mark: %w", err)
		}
		fp, err := opts.Fingerprint()
		if err != nil {
			return fmt.Errorf("fingerprinting manifests: %w", err)
		}
		if last, _ := readFingerprint(opts.StateDir); last == fp {
			return nil
		}
		// While the apply runs no fingerprint is recorded, so a run that
		// sees the old manifests again cannot return early on the old
		// record and leave this apply's result behind.
		if err := os.Remove(fpPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clearing fingerprint: %w", err)
		}
		if err := opts.Apply(ctx); err != nil {
			return fmt.Errorf("applying profile: %w", err)
		}
		if err := statefile.WriteAtomic(fpPath, []byte(fp+"\n"), 0o600); err != nil {
			return err
		}
	}
}

func readFingerprint(stateDir string) (string, error) {
	b, err := statefile.ReadRegular(filepath.Join(stateDir, fingerprintFile), statefile.MaxSmall)
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b, []byte("\n"))), nil
}

// Log appends one line to the hook log of stateDir: what a hook run did
// that a person should know of (agents-setup's held changes).
func Log(stateDir, event, msg string) error {
	return appendLog(stateDir, event, errors.New(msg))
}

// appendLog appends one line for err to the log, rotating it when large.
func appendLog(stateDir, event string, err error) error {
	if stateDir == "" {
		return nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("writing hook log: %w", err)
	}
	path := LogPath(stateDir)
	if fi, serr := os.Stat(path); serr == nil && fi.Size() > logMax {
		os.Rename(path, path+".1")
	}
	f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if ferr != nil {
		return fmt.Errorf("writing hook log: %w", ferr)
	}
	line := fmt.Sprintf("%s %s: %s\n", now().UTC().Format(time.RFC3339), event, strings.ReplaceAll(err.Error(), "\n", " "))
	_, werr := f.WriteString(line)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("writing hook log: %w", werr)
	}
	return nil
}
