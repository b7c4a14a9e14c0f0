package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/statefile"
)

// Update is the one way this project writes config.json outside
// agents-setup's apply transaction (which takes the same lock): it takes
// the file's lock (statefile.Lock, bounded by ctx and statefile.LockWait),
// reads the file, calls change and, when change reports a change, writes
// the file atomically and synced, keeping every key it does not touch. A
// symbolic link at path stays a link: its target is written. An error from
// change, or any other error, writes nothing.
func Update(ctx context.Context, path string, change func(*File) (bool, error)) error {
	unlock, err := statefile.Lock(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := Load(path)
	if err != nil {
		return err
	}
	changed, err := change(f)
	if err != nil || !changed {
		return err
	}
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	target, err := statefile.Target(path)
	if err != nil {
		return fmt.Errorf("writing config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("writing config: %w", err)
	}
	return statefile.WriteAtomic(path, data, 0o600)
}

// Modes and Runtimes are the values agentShim.mode and agentShim.runtime
// take ("" is the first of each).
var (
	Modes    = []string{"ask", "allow", "yolo"}
	Runtimes = []string{"on", "off", "require"}
)

// Validate checks what Parse leaves to the reader: each grant is well
// formed (a command(regex:…) grant compiles: RE2 syntax) and the shim's
// settings hold known values. Its error names the file, the JSON path and
// the problem; agents-setup refuses to write a config that fails it.
func (f *File) Validate() error {
	var errs []string
	for _, l := range []struct {
		name   string
		grants []string
	}{{"allow", f.Grants.Allow}, {"ask", f.Grants.Ask}, {"deny", f.Grants.Deny}} {
		for i, g := range l.grants {
			if err := CheckGrant(g); err != nil {
				errs = append(errs, fmt.Sprintf("%s: userSettings.globalPermissionGrants.%s[%d]: %v", f.Path, l.name, i, err))
			}
		}
	}
	errs = append(errs, f.validateSettings()...)
	if len(errs) > 0 {
		return &ValidationError{Problems: errs}
	}
	return nil
}

// validateSettings is the part of Validate that LoadSettings can check:
// the shim's settings hold known values.
func (f *File) validateSettings() []string {
	var errs []string
	for _, v := range []struct {
		key, value string
		allowed    []string
	}{{"mode", f.Shim.Mode, Modes}, {"runtime", f.Shim.Runtime, Runtimes}} {
		if v.value != "" && !slices.Contains(v.allowed, v.value) {
			errs = append(errs, fmt.Sprintf("%s: agentShim.%s: unknown value %q (allowed: %s)", f.Path, v.key, v.value, strings.Join(v.allowed, ", ")))
		}
	}
	for i, p := range f.Shim.Secrets {
		if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
			errs = append(errs, fmt.Sprintf("%s: agentShim.secrets[%d]: %q is neither absolute nor in the home directory (~/)", f.Path, i, p))
		}
	}
	return errs
}

// ValidationError lists every problem Validate found, one per line.
type ValidationError struct{ Problems []string }

func (e *ValidationError) Error() string { return strings.Join(e.Problems, "\n") }

// CheckGrant reports whether a grant is well formed: a command(regex:RE)
// grant's RE must parse as RE2 (as regexp.Compile parses it; the program
// is not built, which would cost the reader twice).
func CheckGrant(g string) error {
	if re, ok := strings.CutPrefix(g, "command(regex:"); ok && strings.HasSuffix(re, ")") {
		if _, err := syntax.Parse(strings.TrimSuffix(re, ")"), syntax.Perl); err != nil {
			return fmt.Errorf("grant %.80q: %w", g, err)
		}
	}
	return nil
}
