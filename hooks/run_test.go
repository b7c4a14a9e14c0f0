package hooks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agent-shim/agent-shim/statefile"
)

// The test binary doubles as the hook command: with HOOKS_TEST_HOOK set it
// runs hookMain instead of the tests. The hook reads the manifest
// $HOOKS_TEST_ROOT/manifest.txt and "applies" it by copying it to
// config.json in $HOOKS_TEST_STATE.
func TestMain(m *testing.M) {
	if os.Getenv("HOOKS_TEST_HOOK") != "" {
		os.Exit(hookMain())
	}
	// A race-enabled binary sleeps a second before it exits (GORACE's
	// atexit_sleep_ms): the hooks these tests fire are this binary.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

func hookMain() int {
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	state, root := os.Getenv("HOOKS_TEST_STATE"), os.Getenv("HOOKS_TEST_ROOT")
	appendLine(filepath.Join(state, "calls"), strings.Join(args, " "))
	err := Run(context.Background(), RunOptions{
		Args:        args,
		StateDir:    state,
		Fingerprint: fileFingerprint(filepath.Join(root, "manifest.txt")),
		Apply:       copyApply(filepath.Join(root, "manifest.txt"), state, 20*time.Millisecond),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents-setup: hook:", err)
	}
	return 0
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
}

func fileFingerprint(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%x", sha256.Sum256(b)), nil
	}
}

// copyApply copies the manifest to config.json, taking its time, and fails
// if another apply is in flight (in this process or another: the marker is
// created exclusively).
func copyApply(manifest, state string, hold time.Duration) func(context.Context) error {
	return func(context.Context) error {
		inflight := filepath.Join(state, "inflight")
		f, err := os.OpenFile(inflight, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			appendLine(filepath.Join(state, "overlaps"), err.Error())
			return fmt.Errorf("applies overlap: %w", err)
		}
		f.Close()
		defer os.Remove(inflight)
		appendLine(filepath.Join(state, "applies"), "apply")
		b, err := os.ReadFile(manifest)
		if err != nil {
			return err
		}
		time.Sleep(hold)
		return statefile.WriteAtomic(filepath.Join(state, "config.json"), b, 0o600)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	oldNow := now
	now = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { now = oldNow })

	tests := []struct {
		name       string
		args       []string
		recordSame bool  // the last apply's fingerprint is the current one
		fpErr      error // the fingerprint fails
		applyErr   error // the apply fails
		wantApply  int
		wantErr    string // also the log line after the time stamp
	}{
		{name: "branch checkout", args: []string{"a", "b", "1"}, wantApply: 1},
		{name: "file checkout", args: []string{"a", "b", "0"}},
		{name: "merge", args: []string{"0"}, wantApply: 1},
		{name: "squash merge", args: []string{"1"}, wantApply: 1},
		{name: "by hand", wantApply: 1},
		{name: "after --", args: []string{"--", "a", "b", "0"}},
		{name: "unchanged", args: []string{"a", "b", "1"}, recordSame: true},
		{name: "bad arguments", args: []string{"a", "b"}, wantErr: `hook: running hook: want post-checkout's 3 arguments or post-merge's or post-rewrite's 1, got 2: ["a" "b"]`},
		{name: "fingerprint fails", args: []string{"0"}, fpErr: errors.New("reading vendor/x/.agents: boom"), wantErr: "post-merge: fingerprinting manifests: reading vendor/x/.agents: boom"},
		{name: "apply fails", args: []string{"0"}, applyErr: errors.New("config.json:3:4: invalid"), wantApply: 1, wantErr: "post-merge: applying profile: config.json:3:4: invalid"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate test %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			if tc.recordSame {
				writeFile(t, filepath.Join(state, fingerprintFile), "fp1\n", 0o600)
			}
			applies := 0
			err := Run(ctx, RunOptions{
				Args:     tc.args,
				StateDir: state,
				Fingerprint: func() (string, error) {
					return "fp1", tc.fpErr
				},
				Apply: func(context.Context) error {
					applies++
					return tc.applyErr
				},
			})
			if applies != tc.wantApply {
				t.Errorf("applies = %d, want %d", applies, tc.wantApply)
			}
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if _, err := os.Stat(LogPath(state)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("log written without an error: %v", err)
				}
				if tc.wantApply > 0 {
					if got := readFile(t, filepath.Join(state, fingerprintFile)); got != "fp1\n" {
						t.Errorf("fingerprint recorded = %q", got)
					}
				}
				return
			}
			_, wantMsg, _ := strings.Cut(tc.wantErr, ": ")
			if gotErr != wantMsg {
				t.Errorf("Run error = %q, want %q", gotErr, wantMsg)
			}
			if got, want := readFile(t, LogPath(state)), "2026-05-01T12:00:00Z "+tc.wantErr+"\n"; got != want {
				t.Errorf("log = %q, want %q", got, want)
			}
			if _, err := os.Stat(filepath.Join(state, fingerprintFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed run recorded a fingerprint: %v", err)
			}
		})
	}
}

func TestRunRetriesAfterFailedApply(t *testing.T) {
	state := t.TempDir()
	fail := true
	applies := 0
	opts := RunOptions{
		StateDir:    state,
		Fingerprint: func() (string, error) { return "fp", nil },
		Apply: func(context.Context) error {
			applies++
			if fail {
				return errors.New("boom")
			}
			return nil
		},
	}
	if err := Run(context.Background(), opts); err == nil {
		t.Fatal("no error from a failing apply")
	}
	fail = false
	for range 2 {
		if err := Run(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	if applies != 2 {
		t.Errorf("applies = %d, want 2: the failed one, its retry, and none once recorded", applies)
	}
}

func TestRunUnsetsGitEnv(t *testing.T) {
	setupEnv(t)
	a, b := newRepo(t), newRepo(t)
	gitA := filepath.Join(a, ".git")
	env := map[string]string{
		"GIT_DIR":              gitA,
		"GIT_WORK_TREE":        a,
		"GIT_INDEX_FILE":       filepath.Join(gitA, "index"),
		"GIT_OBJECT_DIRECTORY": filepath.Join(gitA, "objects"),
		"GIT_COMMON_DIR":       gitA,
		"GIT_PREFIX":           "sub/",
		"GIT_CONFIG_COUNT":     "1",
		"GIT_CONFIG_KEY_0":     "user.name",
		"GIT_CONFIG_VALUE_0":   "Leaked",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	gitDirOfB := func() string {
		out, err := exec.Command("git", "-C", b, "rev-parse", "--absolute-git-dir").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	// With the hook's environment, git in b works on a: the test can fail.
	if got := gitDirOfB(); got != gitA {
		t.Fatalf("precondition: git in %s with GIT_DIR set answered %s, want %s", b, got, gitA)
	}
	var sawDir string
	var leaked []string
	err := Run(context.Background(), RunOptions{
		Args:        []string{"x", "y", "1"},
		StateDir:    t.TempDir(),
		Fingerprint: func() (string, error) { return "new", nil },
		Apply: func(context.Context) error {
			sawDir = gitDirOfB()
			for k := range env {
				if _, ok := os.LookupEnv(k); ok {
					leaked = append(leaked, k)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(b, ".git"); sawDir != want {
		t.Errorf("git in %s during apply answered %s, want %s", b, sawDir, want)
	}
	if len(leaked) > 0 {
		t.Errorf("still set during apply: %v", leaked)
	}
	got := cleanEnv([]string{"GIT_DIR=/x", "PATH=/bin", "GIT_CONFIG_KEY_3=a", "GIT_AUTHOR_NAME=n", "GIT_PREFIX=p/"})
	if diff := cmp.Diff([]string{"PATH=/bin", "GIT_AUTHOR_NAME=n"}, got); diff != "" {
		t.Errorf("cleanEnv (-want +got):\n%s", diff)
	}
}

func TestLocalEnvVarsCoverGit(t *testing.T) {
	setupEnv(t)
	out := gitT(t, t.TempDir(), "rev-parse", "--local-env-vars")
	for _, v := range strings.Fields(out) {
		if !isLocalEnv(v) {
			t.Errorf("git %s lists %s, localEnvVars does not", gitT(t, ".", "version"), v)
		}
	}
}

// TestRunParallel fires 8 hooks at once, each after changing the manifest,
// as a parallel jiri update does.
func TestRunParallel(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	manifest := filepath.Join(root, "manifest.txt")
	writeFile(t, manifest, "start\n", 0o644)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := statefile.WriteAtomic(manifest, fmt.Appendf(nil, "change %d\n", i), 0o644); err != nil {
				t.Error(err)
			}
			err := Run(context.Background(), RunOptions{
				Args:        []string{"a", "b", "1"},
				StateDir:    state,
				Fingerprint: fileFingerprint(manifest),
				Apply:       copyApply(manifest, state, 5*time.Millisecond),
			})
			if err != nil {
				failed.Add(1)
				t.Errorf("Run: %v", err)
			}
		}()
	}
	wg.Wait()
	checkReconciled(t, state, manifest)
}

// TestRunParallelProcesses does the same with 8 hook processes.
func TestRunParallelProcesses(t *testing.T) {
	state, root := t.TempDir(), t.TempDir()
	manifest := filepath.Join(root, "manifest.txt")
	writeFile(t, manifest, "start\n", 0o644)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := statefile.WriteAtomic(manifest, fmt.Appendf(nil, "change %d\n", i), 0o644); err != nil {
				t.Error(err)
			}
			cmd := exec.Command(exe, "hooks", "run", "--", "a", "b", "1")
			cmd.Env = append(os.Environ(), "HOOKS_TEST_HOOK=1", "HOOKS_TEST_STATE="+state, "HOOKS_TEST_ROOT="+root)
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("hook process: %v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	checkReconciled(t, state, manifest)
	if n := countLines(t, filepath.Join(state, "calls")); n != 8 {
		t.Errorf("calls = %d, want 8", n)
	}
}

// checkReconciled checks that the last apply came after the last change,
// that no two applies overlapped and that nothing was logged.
func checkReconciled(t *testing.T, state, manifest string) {
	t.Helper()
	if got, want := readFile(t, filepath.Join(state, "config.json")), readFile(t, manifest); got != want {
		t.Errorf("config.json = %q, want the last manifest %q", got, want)
	}
	fp, _ := fileFingerprint(manifest)()
	if got := readFile(t, filepath.Join(state, fingerprintFile)); got != fp+"\n" {
		t.Errorf("recorded fingerprint = %q, want %q", got, fp)
	}
	if n := countLines(t, filepath.Join(state, "overlaps")); n > 0 {
		t.Errorf("%d applies overlapped:\n%s", n, readFile(t, filepath.Join(state, "overlaps")))
	}
	if _, err := os.Stat(LogPath(state)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors logged:\n%s", readFile(t, LogPath(state)))
	}
	t.Logf("%d applies", countLines(t, filepath.Join(state, "applies")))
}

// TestCheckoutFiresHook checks out a branch that changes the manifest with
// the real git: the installed hook runs and config.json follows.
func TestCheckoutFiresHook(t *testing.T) {
	setupEnv(t)
	repo, state := newRepo(t), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKS_TEST_HOOK", "1")
	t.Setenv("HOOKS_TEST_STATE", state)
	t.Setenv("HOOKS_TEST_ROOT", repo)

	manifest := filepath.Join(repo, "manifest.txt")
	gitT(t, repo, "checkout", "-q", "-b", "main")
	writeFile(t, manifest, "git status\n", 0o644)
	gitT(t, repo, "add", "manifest.txt")
	gitT(t, repo, "commit", "-q", "-m", "one rule")
	gitT(t, repo, "checkout", "-q", "-b", "feature")
	writeFile(t, manifest, "git status\ngit push\n", 0o644)
	gitT(t, repo, "commit", "-q", "-am", "two rules")
	gitT(t, repo, "checkout", "-q", "main")

	// The user's own post-checkout keeps running.
	user := filepath.Join(repo, ".git", "hooks", "post-checkout")
	writeFile(t, user, "#!/bin/sh\necho \"user $3\" >>'"+filepath.Join(state, "user")+"'\n", 0o755)
	if _, err := Install(context.Background(), Options{Repos: []string{repo}, Command: []string{exe, "hooks", "run", "--"}, StateDir: state}); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(state, "config.json")

	gitT(t, repo, "checkout", "-q", "feature")
	if got := readFile(t, config); got != "git status\ngit push\n" {
		t.Errorf("after checkout of feature, config.json = %q", got)
	}
	gitT(t, repo, "checkout", "-q", "main")
	if got := readFile(t, config); got != "git status\n" {
		t.Errorf("after checkout of main, config.json = %q", got)
	}
	// A file checkout (flag 0) is skipped though the manifest changed.
	gitT(t, repo, "checkout", "-q", "feature", "--", "manifest.txt")
	if got := readFile(t, config); got != "git status\n" {
		t.Errorf("after a file checkout, config.json = %q", got)
	}
	gitT(t, repo, "reset", "-q", "--hard")
	// post-merge.
	gitT(t, repo, "merge", "-q", "--ff-only", "feature")
	if got := readFile(t, config); got != "git status\ngit push\n" {
		t.Errorf("after merge, config.json = %q", got)
	}

	calls := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(state, "calls"))), "\n")
	var shapes []string
	for _, c := range calls {
		f := strings.Fields(c)
		shapes = append(shapes, fmt.Sprintf("%d args, last %s", len(f), f[len(f)-1]))
	}
	want := []string{"3 args, last 1", "3 args, last 1", "3 args, last 0", "1 args, last 0"}
	if diff := cmp.Diff(want, shapes); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(state, "user")); got != "user 1\nuser 1\nuser 0\n" {
		t.Errorf("user's hook calls = %q", got)
	}
	if n := countLines(t, filepath.Join(state, "applies")); n != 3 {
		t.Errorf("applies = %d, want 3", n)
	}
	if _, err := os.Stat(LogPath(state)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors logged:\n%s", readFile(t, LogPath(state)))
	}
}

func BenchmarkRunUnchanged(b *testing.B) {
	state, root := b.TempDir(), b.TempDir()
	var paths []string
	for i := range 7 {
		p := filepath.Join(root, fmt.Sprintf("m%d.txt", i))
		os.WriteFile(p, []byte(strings.Repeat("git status --short\n", 70)), 0o644)
		paths = append(paths, p)
	}
	fp := func() (string, error) {
		h := sha256.New()
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			h.Write(b)
		}
		return fmt.Sprintf("%x", h.Sum(nil)), nil
	}
	opts := RunOptions{Args: []string{"a", "b", "1"}, StateDir: state, Fingerprint: fp, Apply: func(context.Context) error { return nil }}
	if err := Run(context.Background(), opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := Run(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunLateChange makes the change land in the narrowest window: after the
// lock holder's last look at the fingerprint and before it unlocks. The late
// run finds the lock busy and leaves; the holder must come back for it.
func TestRunLateChange(t *testing.T) {
	ctx := context.Background()
	state, root := t.TempDir(), t.TempDir()
	manifest := filepath.Join(root, "manifest.txt")
	writeFile(t, manifest, "early\n", 0o644)
	base := fileFingerprint(manifest)
	calls := 0
	holder := RunOptions{
		Args:     []string{"a", "b", "1"},
		StateDir: state,
		Fingerprint: func() (string, error) {
			fp, err := base()
			calls++
			if calls == 3 { // the look after the first apply: [fast path, drain, this]
				if err := statefile.WriteAtomic(manifest, []byte("late\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				late := RunOptions{Args: []string{"0"}, StateDir: state, Fingerprint: base, Apply: func(context.Context) error {
					t.Error("the late run applied while the holder held the lock")
					return nil
				}}
				if err := Run(ctx, late); err != nil {
					t.Errorf("late run: %v", err)
				}
			}
			return fp, err
		},
		Apply: copyApply(manifest, state, 0),
	}
	if err := Run(ctx, holder); err != nil {
		t.Fatal(err)
	}
	if calls < 3 {
		t.Fatalf("fingerprint called %d times: the late run never happened", calls)
	}
	checkReconciled(t, state, manifest)
}
