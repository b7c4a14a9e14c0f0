package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/go-git/go-git/v5"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("u", false, "update the golden sections of the testscript scripts")

// testTime is the clock of every test run, so that output is stable.
var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestMain(m *testing.M) {
	// TestKilledMidWrite runs the test binary as agents-setup.
	if os.Getenv("AGENTS_SETUP_TEST_MAIN") == "1" {
		args := os.Args[:1]
		for i, a := range os.Args {
			if a == "--" {
				args = append(args, os.Args[i+1:]...)
				break
			}
		}
		restart = fakeRestart
		os.Exit(run(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(pinnedM{m}, map[string]func(){
		"agents-setup": func() {
			now = func() time.Time { return testTime }
			restart = fakeRestart
			main()
		},
	})
}

// pinnedM runs the tests with HOME and XDG_* in a temporary directory and
// fake restarts: the test binary's own runs (the scripts pin theirs in
// Setup) never touch the real home, and tests need no t.Setenv, so they
// can run in parallel. (It wraps m rather than running first in TestMain:
// testscript runs the scripts' commands through TestMain too.)
type pinnedM struct{ m *testing.M }

func (p pinnedM) Run() int {
	restart = fakeRestart
	// The processes tests start are this binary: see Setup's GORACE.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	home, err := os.MkdirTemp("", "agents-setup-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(home)
	for k, v := range map[string]string{
		"HOME":              home,
		"XDG_CONFIG_HOME":   filepath.Join(home, ".config"),
		"XDG_STATE_HOME":    filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":    filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":     filepath.Join(home, ".local", "share"),
		"GEMINI_CONFIG_DIR": "",
		"GEMINI_HOME":       "",
	} {
		os.Setenv(k, v)
	}
	return p.m.Run()
}

// fakeRestart stands in for systemctl: no test restarts a real service.
func fakeRestart(_ context.Context, services []string, stdout io.Writer) error {
	fmt.Fprintf(stdout, "test: systemctl --user try-restart %s\n", strings.Join(services, " "))
	return nil
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			// Every command of a script is this test binary; built with
			// -race it would sleep a second before exiting (GORACE's
			// atexit_sleep_ms, default 1000): most of the package's
			// test time once.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "home", ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, "home", ".local", "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(work, "home", ".cache"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(work, "home", ".local", "share"))
			env.Setenv("CONFIG", filepath.Join(work, "home", ".gemini", "config", "config.json"))
			// The real git, where scripts use it, reads no system or user
			// configuration but this one.
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(work, "gitconfig"))
			if err := os.WriteFile(filepath.Join(work, "gitconfig"), []byte("[user]\n\tname = Test\n\temail = test@example.com\n"), 0o600); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(work, "home"), 0o700)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":   cmdExits,
			"mkjiri":  cmdMkjiri,
			"gitinit": cmdGitinit,
			"summary": cmdSummary,
			"backups": cmdBackups,
			"mode":    cmdMode,
			"catglob": cmdCatglob,
			"tree":    cmdTree,
		},
	})
}

// cmdExits runs a command and asserts its exact exit code:
//
//	exits N agents-setup [args...]
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		got = exit.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdGitinit makes each directory a git repository with go-git.
func cmdGitinit(ts *testscript.TestScript, neg bool, args []string) {
	for _, dir := range args {
		if _, err := git.PlainInit(ts.MkAbs(dir), false); err != nil {
			ts.Fatalf("gitinit: %v", err)
		}
	}
}

// cmdMkjiri makes a fake jiri checkout at DIR (see makeJiri).
func cmdMkjiri(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkjiri DIR")
	}
	if err := makeJiri(ts.MkAbs(args[0]), nil); err != nil {
		ts.Fatalf("mkjiri: %v", err)
	}
}

// jiriFiles are the files of the fake checkout, relative to its root.
var jiriFiles = map[string]string{
	".jiri_root/.keep":                                          "",
	"src/deep/.keep":                                            "",
	".agents/config/permissions/read_only.txt":                  "# inspection\ngit status\nls\ncat  # inline comment\n",
	".agents/config/permissions/local_changes.txt":              "git commit\n",
	".agents/config/permissions/external_changes.txt":           "git push\n",
	".agents/config/permissions/never_allow.txt":                "git push --force\nrm -rf /\n",
	"vendor/a/.agents/config/permissions/read_only.txt":         "go version\n",
	"vendor/a/.agents/config/permissions/never_allow.txt":       "git reset --hard\n",
	"vendor/a/.agents/config/services.txt":                      "# restarted after a change\nagent-helper.service\n",
	"vendor/b/.agents/config/permissions/device_ops.txt":        "ffx target list\n",
	"vendor/b/.agents/config/permissions/cache_destruction.txt": "go clean -cache\n",
	"vendor/stray/.agents/config/permissions/read_only.txt":     "rm -rf /tmp\n",
}

// makeJiri makes a fake jiri checkout at root: .jiri_root/, the root's own
// manifests, two vendor overlays that are git repositories (go-git), a
// stray vendor directory that is not, and src/deep to run from. files
// replaces or adds files.
func makeJiri(root string, files map[string]string) error {
	all := map[string]string{}
	for k, v := range jiriFiles {
		all[k] = v
	}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, repo := range []string{".", "vendor/a", "vendor/b"} {
		if _, err := git.PlainInit(filepath.Join(root, repo), false); err != nil {
			return err
		}
	}
	return nil
}

// cmdSummary prints a config file in short: the profile, the grant counts
// per list, the grants that are not regular expressions (the hand-added
// ones in the tests) and the rules by source.
//
//	summary FILE
func cmdSummary(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: summary FILE")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var any map[string]any
	if err := json.Unmarshal(data, &any); err != nil {
		ts.Fatalf("summary: %s is not valid JSON: %v", args[0], err)
	}
	f, err := config.Parse(args[0], data)
	ts.Check(err)
	w := ts.Stdout()
	fmt.Fprintf(w, "profile %q\n", f.Shim.Profile)
	for _, l := range []struct {
		name   string
		grants []string
	}{{"allow", f.Grants.Allow}, {"ask", f.Grants.Ask}, {"deny", f.Grants.Deny}} {
		fmt.Fprintf(w, "%s %d\n", l.name, len(l.grants))
		for _, g := range l.grants {
			if !strings.HasPrefix(g, "command(regex:") {
				fmt.Fprintf(w, "  %s\n", g)
			}
		}
	}
	fmt.Fprintf(w, "rules %d\n", len(f.Shim.Rules))
	for _, r := range f.Shim.Rules {
		if r.Source.Overlay == "builtin" {
			continue
		}
		fmt.Fprintf(w, "  %s %s:%d %s %q\n", r.Source.Overlay, r.Source.File, r.Source.Line, r.Category, r.Line)
	}
	var keys []string
	for k := range any {
		keys = append(keys, k)
	}
	fmt.Fprintf(w, "keys %d\n", len(keys))
}

// cmdBackups prints the number of backup files in the state directory
// and fails if any temporary file is left beside the config or the state.
//
//	backups CONFIG
func cmdBackups(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: backups CONFIG")
	}
	home := ts.Getenv("HOME")
	states, _ := filepath.Glob(filepath.Join(home, ".local", "state", "agents-setup", "*"))
	n := 0
	for _, s := range states {
		b, _ := filepath.Glob(filepath.Join(s, "backups", "*.json"))
		n += len(b)
		assertNoTemp(ts, s)
	}
	assertNoTemp(ts, filepath.Dir(ts.MkAbs(args[0])))
	fmt.Fprintf(ts.Stdout(), "%d backups\n", n)
}

func assertNoTemp(ts *testscript.TestScript, dir string) {
	tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(tmp) > 0 {
		ts.Fatalf("temporary files left: %v", tmp)
	}
}

// cmdMode prints the mode of each file, links not followed:
//
//	mode FILE...
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: mode FILE...")
	}
	for _, a := range args {
		fi, err := os.Lstat(ts.MkAbs(a))
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "%s %s\n", fi.Mode(), a)
	}
}

// cmdCatglob prints the files matching a glob (the state directory's name
// holds a hash of the config's path): catglob PATTERN.
func cmdCatglob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: catglob PATTERN")
	}
	files, _ := filepath.Glob(ts.MkAbs(args[0]))
	if len(files) == 0 {
		ts.Fatalf("no file matches %s", args[0])
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		ts.Check(err)
		ts.Stdout().Write(data)
	}
}

// cmdTree prints every path under DIR (DIR itself included) with its
// mode, size and modification time, links not followed: what a command
// that writes nothing leaves as it was.
//
//	tree DIR
func cmdTree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tree DIR")
	}
	root := ts.MkAbs(args[0])
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(ts.Stdout(), "%s %s %d %d\n", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	ts.Check(err)
}
