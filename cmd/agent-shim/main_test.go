package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/agent-shim/agent-shim/internal/locktest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("u", false, "update testscript golden files")

func TestMain(m *testing.M) {
	locktest.Main() // the lock holder of waits_test.go
	withoutLandlock()
	testscript.Main(pinnedHome{m}, map[string]func(){
		"agent-shim": func() {
			// No test prompts on the terminal running it: $TEST_TTY, when
			// set, is a file of answers (the questions are appended to
			// $TEST_TTY.out); otherwise there is no terminal.
			openTTY = func() (io.ReadWriteCloser, error) {
				if path := os.Getenv("TEST_TTY"); path != "" {
					return openFakeTTY(path)
				}
				return nil, errors.New("no terminal in tests")
			}
			os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// pinnedHome runs the tests with HOME and the XDG directories in a
// temporary directory, so that no test, even one that forgets to pin
// them, reads or writes the real ones. (Run is not called when the test
// binary runs as agent-shim for a script: scripts set their own.)
type pinnedHome struct{ m *testing.M }

func (p pinnedHome) Run() int {
	dir, err := os.MkdirTemp("", "agent-shim-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The go command the tests run finds its caches and settings from
	// HOME and XDG: keep them where they were.
	if home, err := os.UserHomeDir(); err == nil && os.Getenv("GOPATH") == "" {
		os.Setenv("GOPATH", filepath.Join(home, "go"))
	}
	if cache, err := os.UserCacheDir(); err == nil && os.Getenv("GOCACHE") == "" {
		os.Setenv("GOCACHE", filepath.Join(cache, "go-build"))
	}
	if config, err := os.UserConfigDir(); err == nil && os.Getenv("GOENV") == "" {
		os.Setenv("GOENV", filepath.Join(config, "go", "env"))
	}
	for _, kv := range [][2]string{{"HOME", "home"}, {"XDG_CONFIG_HOME", "config"}, {"XDG_STATE_HOME", "state"},
		{"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"}} {
		os.Setenv(kv[0], filepath.Join(dir, kv[1]))
	}
	os.Unsetenv("GEMINI_CONFIG_DIR")
	os.Unsetenv("GEMINI_HOME")
	os.Unsetenv("CODEX_HOME")
	defer func() {
		if built.dir != "" {
			os.RemoveAll(built.dir)
		}
	}()
	return p.m.Run()
}

// built is agents-setup, built once for the scripts that run it.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// cmdAgentsSetup puts agents-setup, built from ../agents-setup as the
// README installs it (once per test process), in DIR:
//
//	agents-setup DIR
func cmdAgentsSetup(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: agents-setup DIR")
	}
	built.once.Do(func() {
		if *agentsSetupBin != "" {
			built.bin = *agentsSetupBin
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "agent-shim-test-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "agents-setup")
		cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", built.bin, "../agents-setup")
		cmd.Env = origEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building agents-setup: %v\n%s", err, out)
		}
	})
	ts.Check(built.err)
	ts.Check(os.Symlink(built.bin, filepath.Join(ts.MkAbs(args[0]), "agents-setup")))
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "xdg", "config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, "xdg", "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(work, "xdg", "cache"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(work, "xdg", "data"))
			env.Setenv("GEMINI_CONFIG_DIR", "")
			env.Setenv("GEMINI_HOME", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    cmdExitcode,
			"atwork":      cmdAtWork,
			"elide-rules": cmdElideRules,
			// agents-setup DIR: see cmdAgentsSetup.
			"agents-setup": cmdAgentsSetup,
		},
	})
}

// cmdAtWork replaces @WORK@ with $WORK in files, in place: hook inputs
// name an absolute cwd, which a txtar file cannot spell.
func cmdAtWork(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: atwork file...")
	}
	for _, f := range args {
		data := strings.ReplaceAll(ts.ReadFile(f), "@WORK@", ts.Getenv("WORK"))
		if err := os.WriteFile(ts.MkAbs(f), []byte(data), 0o644); err != nil {
			ts.Fatalf("%v", err)
		}
	}
}

// cmdElideRules prints a settings file with each run of ten or more
// Bash(…) entries (the second line install merges into Claude Code's
// permissions, thousands of them) cut to its first entry and "…", so
// that a golden file shows where they went and every other byte.
func cmdElideRules(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: elide-rules file")
	}
	data := ts.ReadFile(args[0])
	entry := regexp.MustCompile(`"Bash\((?:[^"\\]|\\.)*\)"`)
	sep := regexp.MustCompile(`^,\s*$`)
	locs := entry.FindAllStringIndex(data, -1)
	var out strings.Builder
	done := 0
	for i := 0; i < len(locs); {
		j := i
		for j+1 < len(locs) && sep.MatchString(data[locs[j][1]:locs[j+1][0]]) {
			j++
		}
		if j-i+1 >= 10 {
			out.WriteString(data[done:locs[i+1][0]])
			out.WriteString("…")
			done = locs[j][1]
		}
		i = j + 1
	}
	out.WriteString(data[done:])
	ts.Stdout().Write([]byte(out.String()))
}

// cmdExitcode runs a program and asserts its exact exit status:
// `exitcode 2 agent-shim explain` (testscript's `!` only means non-zero);
// death by signal N counts as 128+N.
// Its stdout and stderr are kept for the commands that follow.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
		// A process killed by a signal has no exit code: report it as
		// a shell does, 128+N.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// fakeTTY is a terminal for tests: answers from a file, questions to
// another.
type fakeTTY struct {
	in  *os.File
	out *os.File
}

func openFakeTTY(path string) (io.ReadWriteCloser, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile(path+".out", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &fakeTTY{in, out}, nil
}

func (t *fakeTTY) Read(p []byte) (int, error)  { return t.in.Read(p) }
func (t *fakeTTY) Write(p []byte) (int, error) { return t.out.Write(p) }
func (t *fakeTTY) Close() error {
	t.in.Close()
	return t.out.Close()
}
