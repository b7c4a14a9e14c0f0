package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/setupstate"
	"github.com/agent-shim/agent-shim/statefile"
)

// crashEnv names the step at which a re-executed test binary exits, as a
// crash would (see TestMain); optsEnv holds its Options as JSON.
const (
	crashEnv = "SETUP_TEST_CRASH_AT"
	optsEnv  = "SETUP_TEST_OPTS"
	// crashCode is the exit status of a simulated crash.
	crashCode = 77
	// editEnv makes the crashing run edit the config as an editor would
	// (in place, no lock) at a step: "step:grant".
	editEnv = "SETUP_TEST_EDIT_AT"
)

// appendGrant adds grant to the allow list of the config at path, written
// in place without the lock, as an editor does.
func appendGrant(path, grant string) error {
	f, err := config.Load(path)
	if err != nil {
		return err
	}
	f.Grants.Allow = append(f.Grants.Allow, grant)
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func TestMain(m *testing.M) {
	if step := os.Getenv(crashEnv); step != "" {
		var o Options
		if err := json.Unmarshal([]byte(os.Getenv(optsEnv)), &o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		o.Now = fixedNow
		o.Restart = noRestart
		editAt, editGrant, _ := strings.Cut(os.Getenv(editEnv), ":")
		stepHook = func(name string) error {
			if name == editAt {
				if err := appendGrant(os.Getenv("SETUP_TEST_CONFIG"), editGrant); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
			}
			if name == step {
				os.Exit(crashCode) // no deferred cleanup runs, as in a crash
			}
			return nil
		}
		if err := Run(context.Background(), &o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The crashing runs are this binary: with -race it would sleep a
	// second at each exit (GORACE's atexit_sleep_ms).
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fixedNow() time.Time { return testTime }

func noRestart(context.Context, []string, io.Writer) error { return nil }

// handConfig holds grants added by hand and a key of the user's.
const handConfig = `{
  "ui": {"theme": "dark"},
  "userSettings": {"globalPermissionGrants": {
    "allow": ["command(my-tool --check)"],
    "ask": ["command(my-deploy)"],
    "deny": ["command(rm -rf /srv)"]
  }}
}
`

// env is one checkout, config and state directory under a temporary home.
type env struct {
	home, root, cfg, state string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	home := t.TempDir()
	e := &env{home: home, root: filepath.Join(home, "tree"), cfg: filepath.Join(home, "cfg", "config.json"), state: filepath.Join(home, "state")}
	perm := filepath.Join(e.root, ".agents", "config", "permissions")
	for _, d := range []string{filepath.Join(e.root, ".jiri_root"), perm, filepath.Dir(e.cfg)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{
		"read_only.txt":        "git status\nls\n",
		"local_changes.txt":    "git commit\n",
		"external_changes.txt": "git push\n",
		"never_allow.txt":      "rm -rf /\n",
	} {
		writeFile(t, filepath.Join(perm, name), text)
	}
	writeFile(t, e.cfg, handConfig)
	return e
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// opts returns the Options of a run against e; edit sets the mode.
func (e *env) opts(edit func(*Options)) Options {
	o := Options{Config: e.cfg, StateDir: e.state, Root: e.root, RootSet: true}
	if edit != nil {
		edit(&o)
	}
	return o
}

func (e *env) run(t testing.TB, o Options) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	o.Stdout, o.Stderr = &stdout, &stderr
	o.Now, o.Restart = fixedNow, noRestart
	o.Getenv = func(k string) string {
		if k == "HOME" {
			return e.home
		}
		return ""
	}
	o.Getwd = func() (string, error) { return e.root, nil }
	err := Run(context.Background(), &o)
	return stdout.String() + stderr.String(), err
}

func (e *env) mustRun(t testing.TB, o Options) string {
	t.Helper()
	out, err := e.run(t, o)
	if err != nil {
		t.Fatalf("%+v: %v\n%s", o, err, out)
	}
	return out
}

func (e *env) state_(t testing.TB) *setupstate.State {
	t.Helper()
	st, err := setupstate.Store{Dir: e.state}.Load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (e *env) actions(t testing.TB) []string {
	t.Helper()
	var a []string
	for _, h := range e.state_(t).History {
		s := h.Action
		if h.Undone {
			s += "(undone)"
		}
		a = append(a, s)
	}
	return a
}

// assertClean checks that no temporary file and no journal is left in
// the config's directory, the state directory or the backups.
func (e *env) assertClean(t testing.TB) {
	t.Helper()
	for _, d := range []string{filepath.Dir(e.cfg), e.state, filepath.Join(e.state, "backups")} {
		tmp, _ := filepath.Glob(filepath.Join(d, ".*.tmp-*"))
		if len(tmp) > 0 {
			t.Errorf("temporary files left in %s: %v", d, tmp)
		}
	}
	if _, err := os.Stat(filepath.Join(e.state, journalFile)); err == nil {
		t.Errorf("journal left: %s", readFile(t, filepath.Join(e.state, journalFile)))
	}
}

// handKept checks that the config parses and holds the hand grants.
func handKept(t testing.TB, path string) {
	t.Helper()
	f, err := config.Load(path)
	if err != nil {
		t.Fatalf("config invalid: %v", err)
	}
	for _, want := range []struct {
		list []string
		g    string
	}{{f.Grants.Allow, "command(my-tool --check)"}, {f.Grants.Ask, "command(my-deploy)"}, {f.Grants.Deny, "command(rm -rf /srv)"}} {
		if !slices.Contains(want.list, want.g) {
			t.Fatalf("hand grant %s lost:\n%s", want.g, readFile(t, path))
		}
	}
	if !strings.Contains(readFile(t, path), `"theme": "dark"`) {
		t.Fatalf("the user's key was lost")
	}
}

// scenario is a change whose every write step a test interrupts: setup
// runs before it, op is the change.
type scenario struct {
	name  string
	setup []func(*Options)
	op    func(*Options)
	// next is the run after the crash (default: op again).
	next func(*Options)
	// history is the history after next, by whether the crash came after
	// the commit.
	before, after []string
	// undo is the index in setup of the run whose config a --rollback
	// after next restores exactly (-1: the state before any run).
	undo int
}

var (
	applyA = func(o *Options) { o.Profile, o.ProfileSet, o.Allow = "read-only", true, []string{"make a"} }
	applyB = func(o *Options) { o.Profile, o.ProfileSet, o.Deny = "full-access", true, []string{"make b"} }
	reset  = func(o *Options) { o.Reset = true }
	undo1  = func(o *Options) { o.Rollback, o.RollbackSet = 1, true }
)

var scenarios = []scenario{
	{name: "apply", setup: []func(*Options){applyA}, op: applyB,
		before: []string{"apply", "apply"}, after: []string{"apply", "apply"}, undo: 0},
	{name: "reset", setup: []func(*Options){applyA}, op: reset,
		before: []string{"apply", "reset"}, after: []string{"apply", "reset"}, undo: 0},
	{name: "rollback", setup: []func(*Options){applyA, applyB}, op: undo1, next: applyA,
		// Before the commit the rollback never happened: the next run
		// applies A's inputs again. After it, A's config is back and the
		// next run finds it up to date.
		before: []string{"apply", "apply", "apply"}, after: []string{"apply", "apply(undone)", "rollback"}, undo: 1},
}

// TestCrashAtEveryStep kills a change at each of its write steps (the
// process exits where the step would write) and checks what the issue
// asks of every crash: config.json valid with no grant lost, the next run
// completes (or undoes) the change, the history records it exactly once,
// --rollback restores exactly, and no temporary file is left.
func TestCrashAtEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per step")
	}
	for _, sc := range scenarios {
		// The reference: the same runs, uninterrupted.
		ref := newEnv(t)
		var refCfg []string // the config after each setup run
		for _, s := range sc.setup {
			ref.mustRun(t, ref.opts(s))
			refCfg = append(refCfg, readFile(t, ref.cfg))
		}
		ref.mustRun(t, ref.opts(sc.op))
		next := sc.next
		if next == nil {
			next = sc.op
		}
		ref.mustRun(t, ref.opts(next))
		want := readFile(t, ref.cfg)

		for _, step := range Steps {
			t.Run(sc.name+"/"+step, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				for _, s := range sc.setup {
					e.mustRun(t, e.opts(s))
				}
				o := e.opts(sc.op)
				data, err := json.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), crashEnv+"="+step, optsEnv+"="+string(data), "HOME="+e.home)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != crashCode {
					t.Fatalf("the run did not crash at %s: %v\n%s", step, err, out)
				}
				handKept(t, e.cfg)

				e.mustRun(t, e.opts(next))
				handKept(t, e.cfg)
				e.assertClean(t)
				if got := readFile(t, e.cfg); got != want {
					t.Errorf("config after the next run differs from an uninterrupted one:\n%s\nwant:\n%s", got, want)
				}
				committed := slices.Index(Steps, step) > slices.Index(Steps, stepConfig)
				wantHist := sc.before
				if committed {
					wantHist = sc.after
				}
				if got := e.actions(t); !slices.Equal(got, wantHist) {
					t.Errorf("history %v, want %v", got, wantHist)
				}
				// --rollback restores exactly.
				e.mustRun(t, e.opts(undo1))
				wantBack := refCfg[sc.undo]
				if sc.name == "rollback" && !committed {
					wantBack = refCfg[1] // undoing the next run's apply
				}
				if got := readFile(t, e.cfg); got != wantBack {
					t.Errorf("config after --rollback:\n%s\nwant:\n%s", got, wantBack)
				}
				e.assertClean(t)
			})
		}
	}
}

// TestFailAtEveryStep makes each write step fail as a full disk would: an
// error before the commit changes nothing at all; after it, the config is
// the new one and the next run completes the record.
func TestFailAtEveryStep(t *testing.T) {
	for _, step := range Steps {
		t.Run(step, func(t *testing.T) {
			e := newEnv(t)
			e.mustRun(t, e.opts(applyA))
			cfg0, st0 := readFile(t, e.cfg), readFile(t, filepath.Join(e.state, "state.json"))
			backups0, _ := os.ReadDir(filepath.Join(e.state, "backups"))
			stepHook = func(name string) error {
				if name == step {
					return &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
				}
				return nil
			}
			_, err := e.run(t, e.opts(applyB))
			stepHook = nil
			if err == nil || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("got %v, want ENOSPC", err)
			}
			committed := slices.Index(Steps, step) > slices.Index(Steps, stepConfig)
			if !committed {
				if !strings.Contains(err.Error(), "nothing written") {
					t.Errorf("error does not say nothing was written: %v", err)
				}
				if readFile(t, e.cfg) != cfg0 || readFile(t, filepath.Join(e.state, "state.json")) != st0 {
					t.Error("a failed change wrote the config or the state")
				}
				backups, _ := os.ReadDir(filepath.Join(e.state, "backups"))
				if len(backups) != len(backups0) {
					t.Errorf("backups: %d, were %d", len(backups), len(backups0))
				}
				e.assertClean(t)
			} else if !strings.Contains(err.Error(), "the next run of agents-setup completes the record") {
				t.Errorf("error does not say the next run completes it: %v", err)
			}
			handKept(t, e.cfg)
			e.mustRun(t, e.opts(applyB))
			e.assertClean(t)
			if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
				t.Errorf("history %v", got)
			}
		})
	}
}

// TestLocklessEdit: an editor writes config.json while an apply runs
// (between its read and its rename): the edit is kept, merged as a hand
// edit, never overwritten.
func TestLocklessEdit(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	edits := 0
	edit := func(grant string) {
		f, err := config.Load(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		f.Grants.Allow = append(f.Grants.Allow, grant)
		data, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, e.cfg, string(data)) // no lock, not atomic: an editor
	}
	stepHook = func(name string) error {
		if name == stepJournal && edits == 0 {
			edits++
			edit("command(editor-added)")
		}
		return nil
	}
	e.mustRun(t, e.opts(applyB))
	stepHook = nil
	f, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.Grants.Allow, "command(editor-added)") || f.Shim.Profile != "full-access" {
		t.Errorf("after a lockless edit: profile %q, allow %q", f.Shim.Profile, f.Grants.Allow)
	}
	handKept(t, e.cfg)
	e.assertClean(t)
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply"}) {
		t.Errorf("history %v", got)
	}
	// The edit is the user's: a later run keeps it.
	e.mustRun(t, e.opts(applyA))
	if f, _ := config.Load(e.cfg); !slices.Contains(f.Grants.Allow, "command(editor-added)") {
		t.Error("the edited grant was taken for a managed one")
	}

	// A file that changes at every attempt: the run gives up, saying so,
	// and the last edit stands.
	n := 0
	stepHook = func(name string) error {
		if name == stepJournal {
			n++
			edit(fmt.Sprintf("command(edit-%d)", n))
		}
		return nil
	}
	_, err = e.run(t, e.opts(applyB))
	stepHook = nil
	if err == nil || !errors.Is(err, errChanged) || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("got %v", err)
	}
	if f, _ := config.Load(e.cfg); !slices.Contains(f.Grants.Allow, fmt.Sprintf("command(edit-%d)", n)) || f.Shim.Profile != "read-only" {
		t.Errorf("the last edit was overwritten: %v %q", f.Grants.Allow, f.Shim.Profile)
	}
	e.assertClean(t)
}

// TestStaleTempFiles: temporary files of a dead process are removed by the
// next run; those of a live one (this process) are not.
func TestStaleTempFiles(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	dead := filepath.Join(filepath.Dir(e.cfg), statefile.TempPrefix(e.cfg)+"999999999-123")
	deadState := filepath.Join(e.state, statefile.TempPrefix("state.json")+"999999999-456")
	deadBackup := filepath.Join(e.state, "backups", statefile.TempPrefix("000002.json")+"999999999-1")
	live := filepath.Join(filepath.Dir(e.cfg), statefile.TempPrefix(e.cfg)+fmt.Sprint(os.Getppid())+"-789")
	for _, p := range []string{dead, deadState, deadBackup, live} {
		writeFile(t, p, "partial")
	}
	// A run that finds nothing to change cleans up too.
	out := e.mustRun(t, e.opts(applyA))
	if !strings.Contains(out, "removed 3 temporary file(s)") {
		t.Errorf("output: %s", out)
	}
	for _, p := range []string{dead, deadState, deadBackup} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left", p)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's temporary file was removed: %v", err)
	}
}

// TestStateFaults: a state directory that cannot be written, or a
// state.json that is a directory, fails the change before it writes
// anything (reset included, which once overwrote backup 000001).
func TestStateFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(e *env)
		op     func(*Options)
	}{
		{"state dir under a file", func(e *env) {
			// Root writes anywhere, so "unwritable" is a path no one can
			// create a directory at.
			writeFile(t, filepath.Join(e.home, "blocker"), "")
			e.state = filepath.Join(e.home, "blocker", "state")
		}, applyA},
		{"state.json a directory", func(e *env) {
			os.MkdirAll(filepath.Join(e.state, "state.json", "x"), 0o700)
		}, applyA},
		{"state.json a directory, reset", func(e *env) {
			os.MkdirAll(filepath.Join(e.state, "state.json", "x"), 0o700)
		}, reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.break_(e)
			before := readFile(t, e.cfg)
			out, err := e.run(t, e.opts(tc.op))
			if err == nil {
				t.Fatalf("no error:\n%s", out)
			}
			t.Logf("error: %v", err)
			if readFile(t, e.cfg) != before {
				t.Error("config written")
			}
			backups, _ := os.ReadDir(filepath.Join(e.state, "backups"))
			if len(backups) > 0 {
				t.Errorf("backups written: %v", backups)
			}
			e.assertClean(t)
		})
	}
}

// TestSymlinkedConfig: every writer of this package (apply, rollback,
// reset) writes through a symlinked config.json and keeps the link; a
// dangling link creates its target; a link to a directory is an error
// that writes nothing.
func TestSymlinkedConfig(t *testing.T) {
	e := newEnv(t)
	dots := filepath.Join(e.home, "dotfiles")
	os.MkdirAll(dots, 0o700)
	target := filepath.Join(dots, "config.json")
	if err := os.Rename(e.cfg, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dotfiles/config.json", e.cfg); err != nil {
		t.Fatal(err)
	}
	isLink := func() {
		t.Helper()
		if fi, err := os.Lstat(e.cfg); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("config.json is no longer a link")
		}
		handKept(t, target)
	}
	for _, o := range []func(*Options){applyA, applyB, undo1, reset, undo1} {
		e.mustRun(t, e.opts(o))
		isLink()
	}
	if f, _ := config.Load(target); f.Shim.Profile != "read-only" {
		t.Errorf("profile %q after undoing the reset", f.Shim.Profile)
	}
	e.assertClean(t)

	// Dangling: the target is created.
	d := newEnv(t)
	os.Remove(d.cfg)
	dangling := filepath.Join(d.home, "dotfiles", "config.json")
	os.MkdirAll(filepath.Dir(dangling), 0o700)
	if err := os.Symlink(dangling, d.cfg); err != nil {
		t.Fatal(err)
	}
	d.mustRun(t, d.opts(applyA))
	if fi, err := os.Lstat(d.cfg); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("dangling link replaced")
	}
	if f, err := config.Load(dangling); err != nil || f.Shim.Profile != "read-only" {
		t.Errorf("dangling link's target: %v", err)
	}
	// Rolling back the apply that created the target removes it, and
	// keeps the link.
	d.mustRun(t, d.opts(undo1))
	if _, err := os.Stat(dangling); err == nil {
		t.Error("target kept after rolling back its creation")
	}
	if _, err := os.Lstat(d.cfg); err != nil {
		t.Error("the link went too")
	}

	// A link to a directory.
	x := newEnv(t)
	os.Remove(x.cfg)
	dir := filepath.Join(x.home, "adir")
	os.MkdirAll(dir, 0o700)
	os.Symlink(dir, x.cfg)
	out, err := x.run(t, x.opts(applyA))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("got %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("wrote into the directory: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(x.state, "state.json")); err == nil {
		t.Error("state written")
	}
}

// TestConfigValidation: config.json problems the agent or the shim would
// trip on are refused on apply, naming the file and the place, and nothing
// is written.
func TestConfigValidation(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{`{"userSettings": {"globalPermissionGrants": {"deny": ["command(ok)", "command(regex:([a-z)"]}}}`,
			`config.json: userSettings.globalPermissionGrants.deny[1]: grant "command(regex:([a-z)": error parsing regexp: missing closing ]`},
		{`{"userSettings": {"globalPermissionGrants": {"allow": ["command(regex:a**)"]}}}`,
			`userSettings.globalPermissionGrants.allow[0]: grant "command(regex:a**)": error parsing regexp: invalid nested repetition operator`},
		{`{"userSettings": {"globalPermissionGrants": {"ask": ["command(regex:\\8)"]}}}`,
			`globalPermissionGrants.ask[0]: grant "command(regex:\\8)": error parsing regexp: invalid escape sequence`},
		{`{"agentShim": {"mode": "bogus"}}`,
			`config.json: agentShim.mode: unknown value "bogus" (allowed: ask, allow, yolo)`},
		{`{"agentShim": {"runtime": "sometimes"}}`,
			`config.json: agentShim.runtime: unknown value "sometimes" (allowed: on, off, require)`},
		{`{"agentShim": {"mode": "Ask"}}`, `agentShim.mode: unknown value "Ask"`},
		{`{"userSettings": {}, "userSettings": {}}`, `config.json:1:22: duplicate key "userSettings"`},
		{"{\n  \"userSettings\": {\"globalPermissionGrants\": {\"allow\": [\"a\"],\n  \"allow\": [\"b\"]}}}", `config.json:3:3: duplicate key "allow" in userSettings.globalPermissionGrants`},
		{`{"userSettings": {"globalPermissionGrants": {"allow": [""]}}}`, `allow[0]: empty grant`},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		e := newEnv(t)
		writeFile(t, e.cfg, tc.in)
		_, err := e.run(t, e.opts(applyA))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("error does not say nothing was written: %v", err)
		}
		if readFile(t, e.cfg) != tc.in {
			t.Error("config written")
		}
		if _, err := os.Stat(e.state); err == nil {
			t.Error("state directory written")
		}
	}
	// The allowed values pass.
	for _, in := range []string{`{"agentShim": {"mode": "yolo", "runtime": "require"}}`, `{"agentShim": {"mode": "", "runtime": ""}}`} {
		e := newEnv(t)
		writeFile(t, e.cfg, in)
		e.mustRun(t, e.opts(applyA))
	}
}

// TestWrongDigests: a state.json whose digests match nothing in
// config.json (valid JSON, another file's state) must not make a profile
// switch keep the old profile's grants as the user's: grants a manifest
// names count as managed; only the others are kept as custom.
func TestWrongDigests(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(func(o *Options) { o.Profile, o.ProfileSet = "full-access", true }))
	st := e.state_(t)
	for _, l := range []*[]string{&st.Managed.Allow, &st.Managed.Ask, &st.Managed.Deny} {
		for i := range *l {
			(*l)[i] = statefile.Digest(fmt.Sprint("not a grant ", i))
		}
	}
	st.Fingerprint = ""
	if err := (setupstate.Store{Dir: e.state}).Save(st); err != nil {
		t.Fatal(err)
	}
	status := e.mustRun(t, e.opts(func(o *Options) { o.Status = true }))
	if !strings.Contains(status, "match no grant in config.json") {
		t.Errorf("--status does not say so:\n%s", status)
	}
	e.mustRun(t, e.opts(func(o *Options) { o.Profile, o.ProfileSet = "read-only", true }))
	f, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The grants are those of a clean read-only apply: none of the
	// full-access ones stays behind as the user's.
	ref := newEnv(t)
	ref.mustRun(t, ref.opts(func(o *Options) { o.Profile, o.ProfileSet = "read-only", true }))
	want, err := config.Load(ref.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range [3][2][]string{{want.Grants.Allow, f.Grants.Allow}, {want.Grants.Ask, f.Grants.Ask}, {want.Grants.Deny, f.Grants.Deny}} {
		if !slices.Equal(l[0], l[1]) {
			t.Errorf("list %d: %d grants, want %d (those of a clean read-only apply)", i, len(l[1]), len(l[0]))
		}
	}
	handKept(t, e.cfg)
}

// TestRollbackKeepsHandEdits: grants added by hand (and agentShim keys of
// the user's) since the change a rollback undoes survive it; a grant
// deleted by hand stays deleted; undoing the rollback brings back what it
// replaced.
func TestRollbackKeepsHandEdits(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(applyA))
	afterA := readFile(t, e.cfg)
	e.mustRun(t, e.opts(applyB))
	f, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.Grants.Allow = append(f.Grants.Allow, "command(added-by-hand)")
	f.Grants.Ask = slices.DeleteFunc(f.Grants.Ask, func(g string) bool { return g == "command(my-deploy)" })
	f.Shim.Tools.Allow = []string{"Bash:npm test"}
	data, _ := f.Marshal()
	writeFile(t, e.cfg, string(data))
	edited := string(data)

	out := e.mustRun(t, e.opts(undo1))
	if !strings.Contains(out, "keeping the edits made since") {
		t.Errorf("output: %s", out)
	}
	g, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g.Grants.Allow, "command(added-by-hand)") || !slices.Equal(g.Shim.Tools.Allow, []string{"Bash:npm test"}) {
		t.Errorf("hand edits lost: %q %q", g.Grants.Allow, g.Shim.Tools.Allow)
	}
	if slices.Contains(g.Grants.Ask, "command(my-deploy)") {
		t.Error("a grant deleted by hand came back")
	}
	if g.Shim.Profile != "read-only" {
		t.Errorf("profile %q, want read-only", g.Shim.Profile)
	}
	want, _ := config.Parse("a", []byte(afterA))
	for _, gr := range want.Grants.Deny {
		if !slices.Contains(g.Grants.Deny, gr) {
			t.Errorf("managed deny grant of A missing: %.60s", gr)
		}
	}
	// The rollback is undone like any change: the edited file is back.
	e.mustRun(t, e.opts(undo1))
	if got := readFile(t, e.cfg); got != edited {
		t.Errorf("undoing the rollback:\n%s\nwant:\n%s", got, edited)
	}
	if got := e.actions(t); !slices.Equal(got, []string{"apply", "apply(undone)", "rollback(undone)", "rollback"}) {
		t.Errorf("history %v", got)
	}
	e.assertClean(t)
}

// TestNewGenerator: a file an older agents-setup wrote (another config
// version, grants spelled otherwise) is rewritten by a newer one on its
// next run, though neither the manifests nor the file changed since; the
// older one found it up to date.
func TestNewGenerator(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(nil))
	// What an older agents-setup left: the file in version 1, and the
	// state's fingerprint of it under that binary's generator.
	orig := generator
	defer func() { generator = orig }()
	generator = func() string { return "an older spelling of grants" }
	old := strings.Replace(readFile(t, e.cfg), `"version": 2`, `"version": 1`, 1)
	writeFile(t, e.cfg, old)
	info, err := os.Stat(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := manifest.Fingerprint(e.root)
	if err != nil {
		t.Fatal(err)
	}
	st := e.state_(t)
	st.Fingerprint = fingerprint(st.Config, st.Profile, manifests, nil, nil, identity(info))
	if err := (setupstate.Store{Dir: e.state}).Save(st); err != nil {
		t.Fatal(err)
	}
	if out := e.mustRun(t, e.opts(nil)); !strings.Contains(out, "up to date") || readFile(t, e.cfg) != old {
		t.Fatalf("the older binary did not find its own file up to date:\n%s", out)
	}

	generator = orig
	out := e.mustRun(t, e.opts(nil))
	if strings.Contains(out, "up to date") || !strings.Contains(readFile(t, e.cfg), `"version": 2`) {
		t.Fatalf("the newer binary left the older one's file:\n%s\n%s", out, readFile(t, e.cfg))
	}
	handKept(t, e.cfg)
	if out := e.mustRun(t, e.opts(nil)); !strings.Contains(out, "up to date") {
		t.Errorf("the run after it did not find the file up to date:\n%s", out)
	}
}

// TestDenyListBroad: the deny list holds the broad grants (DenyGrants), so
// the agent's own matching denies a never-allowed command behind sudo or
// followed by more, not only the command alone; the allow list never holds
// them.
func TestDenyListBroad(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, e.opts(nil))
	f, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	matches := func(list []string, cmd string) bool {
		for _, g := range list {
			re, ok := strings.CutPrefix(g, "command(regex:")
			if !ok {
				continue
			}
			if regexp.MustCompile(strings.TrimSuffix(re, ")")).MatchString(cmd) {
				return true
			}
		}
		return false
	}
	for _, cmd := range []string{"rm -rf /", "sudo rm -rf /", "rm -rf / ; echo done", "FOO=1 rm -rf /"} {
		if !matches(f.Grants.Deny, cmd) {
			t.Errorf("no deny grant matches %q", cmd)
		}
	}
	for _, cmd := range []string{"sudo ls", "ls; rm -rf /"} {
		if matches(f.Grants.Allow, cmd) {
			t.Errorf("an allow grant matches %q", cmd)
		}
	}
}

// TestOverlayProgramFacts: an overlay's .agents/config/programs.txt shapes
// the grants agents-setup writes (a tool's option that runs a command is
// kept out of its allow grant), and a fact that cannot be read stops the
// apply with its file and line, nothing written.
func TestOverlayProgramFacts(t *testing.T) {
	e := newEnv(t)
	perm := filepath.Join(e.root, ".agents", "config", "permissions")
	writeFile(t, filepath.Join(perm, "read_only.txt"), "git status\nls\nmytool run\n")
	facts := filepath.Join(e.root, ".agents", "config", "programs.txt")
	writeFile(t, facts, "[mytool]\nexec --hook\n")
	e.mustRun(t, e.opts(nil))
	f, err := config.Load(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(cmd string) bool {
		for _, g := range f.Grants.Allow {
			re, ok := strings.CutPrefix(g, "command(regex:")
			if ok && regexp.MustCompile(strings.TrimSuffix(re, ")")).MatchString(cmd) {
				return true
			}
		}
		return false
	}
	if !allowed("mytool run x") {
		t.Errorf("mytool run x is not allowed:\n%q", f.Grants.Allow)
	}
	// The shim decides with the same facts: they travel in config.json.
	if want := []config.ProgramFile{{File: ".agents/config/programs.txt", Text: "[mytool]\nexec --hook\n"}}; !slices.Equal(f.Shim.Programs, want) {
		t.Errorf("agentShim.programs = %q, want %q", f.Shim.Programs, want)
	}
	for _, cmd := range []string{"mytool run --hook 'rm -rf ~'", "mytool run --hook=x"} {
		if allowed(cmd) {
			t.Errorf("%s is allowed though programs.txt says --hook runs a command", cmd)
		}
	}

	before := readFile(t, e.cfg)
	writeFile(t, facts, "[mytool]\nexec --hook\nfrobnicate --x\n")
	out, err := e.run(t, e.opts(nil))
	if err == nil || !strings.Contains(out+err.Error(), ".agents/config/programs.txt:3") {
		t.Errorf("a bad fact: %v\n%s", err, out)
	}
	if readFile(t, e.cfg) != before {
		t.Error("a bad fact changed config.json")
	}
}
