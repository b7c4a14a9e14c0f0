// Package setup is agents-setup's transaction: it turns the permission
// manifests of a checkout (and ad-hoc rules) into the grants of the
// agent's config.json, keeping the grants people added by hand (a
// three-way reconcile, see package reconcile), and records what it did in
// the state directory (package statefile) so that --rollback and --reset
// can undo it.
//
// An apply is prepared whole (the new config, the new state, the backup)
// before anything is replaced, then committed in an order that a crash at
// any point leaves recognisable: the next run completes or undoes it (see
// journal.go). The command-line program is cmd/agents-setup; this package
// holds everything it does to files.
package setup

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Options are one run of agents-setup: the command line, and the
// process's surroundings (nil fields take the process's own).
type Options struct {
	Profile                         string
	Allow, Ask, Deny                []string // ad-hoc rules: -a, -k, -d
	AllowLists, AskLists, DenyLists []string // --allow-list, ...
	Config, StateDir, Root          string
	DryRun, Init, Status, Reset     bool
	// JSON makes --dry-run and --status print JSON with the full grants.
	JSON                    bool
	Rollback                int
	ProfileSet, RollbackSet bool
	RootSet                 bool
	// Hook is set for a git hook run: it re-applies the saved profile and
	// the recorded ad-hoc rules, whatever the command line says, and
	// holds back what would widen the policy until a person runs
	// agents-setup (see trust.go).
	Hook bool

	Stdout, Stderr io.Writer              `json:"-"`
	Getenv         func(string) string    `json:"-"`
	Getwd          func() (string, error) `json:"-"`
	Now            func() time.Time       `json:"-"`
	// Restart restarts user services after a change (default
	// SystemctlRestart).
	Restart func(ctx context.Context, services []string, stdout io.Writer) error `json:"-"`
}

func (o *Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

func (o *Options) getwd() (string, error) {
	if o.Getwd == nil {
		return os.Getwd()
	}
	return o.Getwd()
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *Options) restart(ctx context.Context, services []string, stdout io.Writer) error {
	if o.Restart == nil {
		return SystemctlRestart(ctx, services, stdout)
	}
	return o.Restart(ctx, services, stdout)
}

// Run does what o asks: apply (the default), --status, --rollback or
// --reset. A *UsageError is a mistake on the command line.
func Run(ctx context.Context, o *Options) error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return o.run(ctx)
}

// Apply is a hook run's apply: it takes the lock, reads config and state
// and applies the saved profile (o.Hook should be set).
func Apply(ctx context.Context, o *Options) error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	s, unlock, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return s.apply(ctx)
}

// UsageError is a mistake on the command line: agents-setup exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// HintError carries a hint on how to fix the error.
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// Identity identifies a file's content without reading it: its size,
// modification time, mode, and device, inode and change time where the
// system has them. Every write of ours (a rename) changes it. A nil info is
// "absent".
func Identity(info os.FileInfo) string { return identity(info) }
