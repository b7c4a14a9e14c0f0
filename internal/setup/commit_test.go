package setup

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/statefile"
)

// crashAt runs o in a child process that exits at step, as a crash would.
// extraEnv are added to its environment (editEnv).
func (e *env) crashAt(t *testing.T, step string, o Options, extraEnv ...string) {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+step, optsEnv+"="+string(data), "HOME="+e.home, "SETUP_TEST_CONFIG="+e.cfg)
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != crashCode {
		t.Fatalf("the run did not crash at %s: %v\n%s", step, err, out)
	}
}

// editConfig adds grant to the config's allow list as an editor would:
// no lock, written in place.
func editConfig(t *testing.T, path, grant string) {
	t.Helper()
	f, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Grants.Allow = append(f.Grants.Allow, grant)
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
}

func loadConfig(t *testing.T, path string) *config.File {
	t.Helper()
	f, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSyncEIO: the directory's fsync fails after the rename (EIO). The
// rename was the commit: the error says "written, but", the change is in
// the history at once, the journal stays for the next run, and
// --rollback reaches the state before it.
func TestSyncEIO(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	cfgA := readFile(t, e.cfg)
	stepHook = func(name string) error {
		if name == stepSync {
			return &os.PathError{Op: "fsync", Path: filepath.Dir(e.cfg), Err: syscall.EIO}
		}
		return nil
	}
	out, err := e.run(t, e.opts(applyB))
	stepHook = nil
	if err == nil || !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "written, but") || strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("got %v, want a \"written, but\" EIO\n%s", err, out)
	}
	if p := loadConfig(t, e.cfg).Shim.Profile; p != "full-access" {
		t.Errorf("profile %q after the commit", p)
	}
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
		t.Errorf("history %v, want the change in it", got)
	}
	if _, err := os.Stat(filepath.Join(e.state, journalFile)); err != nil {
		t.Errorf("journal not kept: %v", err)
	}
	out = e.mustRun(t, e.opts(applyB))
	if !strings.Contains(out, "completed an interrupted apply") {
		t.Errorf("next run: %s", out)
	}
	e.assertClean(t)
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
		t.Errorf("history %v after the next run", got)
	}
	e.mustRun(t, e.opts(undo1))
	if got := readFile(t, e.cfg); got != cfgA {
		t.Errorf("--rollback did not reach the state before the change:\n%s\nwant:\n%s", got, cfgA)
	}
}

// TestEditAtRename: an editor writes config.json after the last re-read,
// at the rename itself. What the exchange swapped out is not what was
// read: it is put back and merged, never lost.
func TestEditAtRename(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	edits := 0
	stepHook = func(name string) error {
		if name == stepConfig && edits == 0 {
			edits++
			editConfig(t, e.cfg, "command(edited-at-rename)")
		}
		return nil
	}
	e.mustRun(t, e.opts(applyB))
	stepHook = nil
	f := loadConfig(t, e.cfg)
	if !slices.Contains(f.Grants.Allow, "command(edited-at-rename)") || f.Shim.Profile != "full-access" {
		t.Errorf("after an edit at the rename: profile %q, allow %q", f.Shim.Profile, f.Grants.Allow)
	}
	handKept(t, e.cfg)
	e.assertClean(t)
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
		t.Errorf("history %v", got)
	}

	// Created: no file when read, one at the rename. It is not replaced
	// but merged.
	e = newEnv(t)
	os.Remove(e.cfg)
	created := false
	stepHook = func(name string) error {
		if name == stepConfig && !created {
			created = true
			writeFile(t, e.cfg, handConfig)
		}
		return nil
	}
	e.mustRun(t, e.opts(applyA))
	stepHook = nil
	handKept(t, e.cfg)
	if p := loadConfig(t, e.cfg).Shim.Profile; p != "read-only" {
		t.Errorf("profile %q", p)
	}
	e.assertClean(t)
}

// TestPhantomApply: a crash before the commit, then an editor's change.
// The next run must not take the change for one that happened ("completed
// an interrupted apply"), and --rollback undoes the last real change, not
// the phantom.
func TestPhantomApply(t *testing.T) {
	for _, step := range []string{stepJournal, stepConfig} {
		t.Run(step, func(t *testing.T) {
			e := newEnv(t)
			e.mustRun(t, e.opts(applyA))
			e.crashAt(t, step, e.opts(applyB))
			editConfig(t, e.cfg, "command(edited-after-crash)")
			out := e.mustRun(t, e.opts(func(o *Options) { o.Status = true }))
			t.Logf("status: %s", out)
			out = e.mustRun(t, e.opts(undo1))
			if strings.Contains(out, "completed an interrupted") {
				t.Errorf("a phantom change was completed:\n%s", out)
			}
			if got := e.actions(t); !slices.Equal(got, []string{"apply(undone)", "rollback"}) {
				t.Errorf("history %v, want A undone", got)
			}
			f := loadConfig(t, e.cfg)
			if f.Shim.Profile == "read-only" || f.Shim.Profile == "full-access" {
				t.Errorf("profile %q after rolling back the only real change", f.Shim.Profile)
			}
			if !slices.Contains(f.Grants.Allow, "command(edited-after-crash)") {
				t.Errorf("the edit was lost: %q", f.Grants.Allow)
			}
			handKept(t, e.cfg)
			e.assertClean(t)
		})
	}
}

// TestRecoverKeepsSwappedEdit: a crash after the exchange swapped out an
// edit and before it was put back. The change happened; the edit is kept
// in a file the note names, never swept as a temporary file.
func TestRecoverKeepsSwappedEdit(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "config.json")
	tmp := filepath.Join(dir, statefile.TxnPrefix(target)+"999999999-1")
	for _, tc := range []struct {
		temp      string // "" : no temporary file
		committed bool
		kept      bool
	}{
		{"", true, false},
		{"after", false, false},
		{"before", true, false},
		{"edited", true, true},
	} {
		t.Logf("input: %q", tc.temp)
		if tc.temp != "" {
			writeFile(t, tmp, tc.temp)
		}
		j := journal{Target: target, Temp: tmp, Before: digest([]byte("before")), After: digest([]byte("after"))}
		ok, kept, err := j.committed(digest([]byte("whatever")))
		if err != nil || ok != tc.committed || (kept != "") != tc.kept {
			t.Errorf("committed %v kept %q %v, want %v %v", ok, kept, err, tc.committed, tc.kept)
		}
		if tc.kept && readFile(t, kept) != "edited" {
			t.Errorf("kept %s does not hold the edit", kept)
		}
		os.Remove(tmp)
	}
}

// TestResetUnreadableState: --reset after state.json cannot be read keeps
// the history (the old state.json, kept beside the new one) and every
// backup; its own backup is numbered after them.
func TestResetUnreadableState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, path string)
	}{
		{"corrupt", func(t *testing.T, path string) { writeFile(t, path, "{garbage") }},
		{"wrong version", func(t *testing.T, path string) { writeFile(t, path, `{"version": 99}`) }},
		{"fifo", func(t *testing.T, path string) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.mustRun(t, e.opts(applyA))
			e.mustRun(t, e.opts(applyB))
			backups := filepath.Join(e.state, "backups")
			before, _ := os.ReadDir(backups)
			if len(before) != 2 {
				t.Fatalf("backups before: %v", before)
			}
			statePath := filepath.Join(e.state, "state.json")
			tc.break_(t, statePath)
			if _, err := e.run(t, e.opts(applyA)); err == nil {
				t.Fatal("an apply with an unreadable state succeeded")
			}
			e.mustRun(t, e.opts(reset))
			after, _ := os.ReadDir(backups)
			var names []string
			for _, b := range after {
				names = append(names, b.Name())
			}
			if !slices.Equal(names, []string{"000001.json", "000002.json", "000003.json"}) {
				t.Errorf("backups after the reset: %v", names)
			}
			kept, _ := filepath.Glob(statePath + ".unreadable-*")
			if len(kept) != 1 {
				t.Fatalf("the unreadable state was not kept: %v", kept)
			}
			if got := e.actions(t); !slices.Equal(got, []string{"reset"}) {
				t.Errorf("history %v", got)
			}
			handKept(t, e.cfg)
			if p := loadConfig(t, e.cfg).Shim.Profile; p != "" {
				t.Errorf("profile %q after the reset", p)
			}
			e.assertClean(t)
		})
	}
}

// TestStatusJSONPure: --status --json writes one JSON value to stdout and
// nothing else, also with an interrupted change pending and digests that
// match nothing.
func TestStatusJSONPure(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	e.crashAt(t, stepState, e.opts(applyB))
	var stdout, stderr strings.Builder
	o := e.opts(func(o *Options) { o.Status, o.JSON = true, true })
	o.Stdout, o.Stderr = &stdout, &stderr
	o.Now, o.Restart = fixedNow, noRestart
	o.Getenv = func(k string) string { return map[string]string{"HOME": e.home}[k] }
	o.Getwd = func() (string, error) { return e.root, nil }
	if err := Run(t.Context(), &o); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(stdout.String()))
	var v struct {
		Profile string `json:"profile"`
		Pending bool   `json:"pending"`
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout.String())
	}
	if dec.More() || strings.TrimSpace(stdout.String()[dec.InputOffset():]) != "" {
		t.Errorf("more than one JSON value on stdout:\n%s", stdout.String())
	}
	if !v.Pending {
		t.Errorf("pending not reported: %+v", v)
	}
}

// TestCrashAfterExchangeWithEdit: an editor's change lands at the rename,
// and the run dies right after the exchange swapped it out, before it
// could put it back. The next run completes the change (it was
// committed) and keeps the edit in a file its note names, for the person
// to merge: never lost, never swept as a temporary file.
func TestCrashAfterExchangeWithEdit(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	e.crashAt(t, stepExchanged, e.opts(applyB), editEnv+"="+stepConfig+":command(edited-at-rename)")
	out := e.mustRun(t, e.opts(applyB))
	if !strings.Contains(out, "completed an interrupted apply") || !strings.Contains(out, "merge it by hand") {
		t.Errorf("next run: %s", out)
	}
	kept, _ := filepath.Glob(e.cfg + ".edit-*")
	if len(kept) != 1 || !strings.Contains(readFile(t, kept[0]), "command(edited-at-rename)") {
		t.Fatalf("the edit was not kept: %v", kept)
	}
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
		t.Errorf("history %v", got)
	}
	if p := loadConfig(t, e.cfg).Shim.Profile; p != "full-access" {
		t.Errorf("profile %q", p)
	}
	handKept(t, e.cfg)
	e.assertClean(t)
}

// TestRemovalCommit: a rollback of the change that created config.json
// removes it, committed by renaming it over a tombstone the journal
// names: a crash before that rename then an edit is no phantom; an edit
// at the rename is put back and kept; a crash right after it completes.
func TestRemovalCommit(t *testing.T) {
	created := func(t *testing.T) *env {
		e := newEnv(t)
		os.Remove(e.cfg)
		e.mustRun(t, e.opts(applyA))
		return e
	}
	t.Run("phantom", func(t *testing.T) {
		e := created(t)
		e.crashAt(t, stepConfig, e.opts(undo1))
		editConfig(t, e.cfg, "command(edited-after-crash)")
		out := e.mustRun(t, e.opts(applyA))
		if strings.Contains(out, "completed an interrupted") {
			t.Errorf("a phantom removal was completed:\n%s", out)
		}
		if got := e.actions(t); slices.Contains(got, "rollback") {
			t.Errorf("history %v has the removal that never happened", got)
		}
		if !slices.Contains(loadConfig(t, e.cfg).Grants.Allow, "command(edited-after-crash)") {
			t.Error("the edit was lost")
		}
		e.assertClean(t)
	})
	t.Run("edit at the rename", func(t *testing.T) {
		e := created(t)
		edits := 0
		stepHook = func(name string) error {
			if name == stepConfig && edits == 0 {
				edits++
				editConfig(t, e.cfg, "command(edited-at-rename)")
			}
			return nil
		}
		e.mustRun(t, e.opts(undo1))
		stepHook = nil
		if !slices.Contains(loadConfig(t, e.cfg).Grants.Allow, "command(edited-at-rename)") {
			t.Error("the edit at the rename was lost")
		}
		e.assertClean(t)
	})
	t.Run("crash after the rename", func(t *testing.T) {
		e := created(t)
		e.crashAt(t, stepExchanged, e.opts(undo1))
		out := e.mustRun(t, e.opts(func(o *Options) { o.Status = true }))
		t.Logf("status: %s", out)
		out = e.mustRun(t, e.opts(applyA))
		if !strings.Contains(out, "completed an interrupted rollback") {
			t.Errorf("next run: %s", out)
		}
		if got := e.actions(t); !slices.Equal(got[:2], []string{"apply(undone)", "rollback"}) {
			t.Errorf("history %v", got)
		}
		e.assertClean(t)
	})
}
