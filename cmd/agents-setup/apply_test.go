package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
)

// handConfig holds rules added by hand and a key of the user's.
const handConfig = `{
  "ui": {"theme": "dark"},
  "userSettings": {"globalPermissionGrants": {
    "allow": ["command(my-tool --check)"],
    "ask": ["command(my-deploy)"],
    "deny": ["command(rm -rf /srv)"]
  }}
}
`

// pinEnv returns a temporary directory for a test's files. HOME and XDG_*
// point into a temporary directory for the whole test binary (TestMain),
// so that no test touches the real home, and tests can run in parallel.
func pinEnv(t testing.TB) string {
	return t.TempDir()
}

// long runs the exhaustive versions of the slow tests (more processes
// killed, more concurrent applies). CI sets CI=true, which turns it on:
// .ci/run needs no flag that packages without it would refuse.
var long = flag.Bool("long", os.Getenv("CI") != "", "run the exhaustive kill and concurrency loops (default on when $CI is set)")

// TestConcurrentApplies runs 16 applies at once (6 without -long), mixing
// profiles and ad-hoc rules, against one config with hand-added rules,
// while another goroutine keeps reading the file.
func TestConcurrentApplies(t *testing.T) {
	t.Parallel()
	home := pinEnv(t)
	root := filepath.Join(home, "tree")
	if err := makeJiri(root, nil); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "cfg", "config.json")
	stateDir := filepath.Join(home, "state")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(handConfig), 0o600); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	readerDone := make(chan error, 1)
	go func() {
		reads := 0
		for {
			select {
			case <-stop:
				if reads == 0 {
					readerDone <- fmt.Errorf("the reader never read")
					return
				}
				readerDone <- nil
				return
			default:
			}
			f, err := config.Load(cfg)
			if err != nil {
				readerDone <- fmt.Errorf("read %d: %v", reads, err)
				return
			}
			if err := handKept(f); err != nil {
				readerDone <- fmt.Errorf("read %d: %v", reads, err)
				return
			}
			reads++
		}
	}()

	profiles := []string{"read-only", "local-changes", "external-changes", "full-access"}
	var wg sync.WaitGroup
	n := 6
	if *long {
		n = 16
	}
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"agents-setup", "--config", cfg, "--state-dir", stateDir, "--root", root, "-p", profiles[i%4]}
			switch i % 3 {
			case 0:
				args = append(args, "-a", fmt.Sprintf("make test%d", i))
			case 1:
				args = append(args, "-d", fmt.Sprintf("git push origin main%d", i), "-k", "git rebase")
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
				errs[i] = fmt.Sprintf("run %d: exit %d: %s", i, code, stderr.String())
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-readerDone; err != nil {
		t.Error(err)
	}
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	f, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := handKept(f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mustRead(t, cfg)), `"theme": "dark"`) {
		t.Error("the user's key was lost")
	}
	backups, _ := filepath.Glob(filepath.Join(stateDir, "backups", "*"))
	if len(backups) > 10 || len(backups) < 1 {
		t.Errorf("%d backups, want 1 to 10", len(backups))
	}
	assertNoTempFiles(t, filepath.Dir(cfg), stateDir, filepath.Join(stateDir, "backups"))

	// A last run without ad-hoc rules leaves none, and only the user's
	// grants besides the managed ones.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agents-setup", "--config", cfg, "--state-dir", stateDir, "--root", root, "-p", "read-only"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err = config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Shim.Rules {
		if r.Category == "ad-hoc" {
			t.Errorf("ad-hoc rule left: %q", r.Line)
		}
	}
	// 4 allowed, 3 asked, 3 denied manifest grants plus the user's one each.
	if len(f.Grants.Allow) != 5 || len(f.Grants.Ask) != 4 || len(f.Grants.Deny) != 4 {
		t.Errorf("after the last run: %d allow, %d ask, %d deny grants, want 5, 4, 4", len(f.Grants.Allow), len(f.Grants.Ask), len(f.Grants.Deny))
	}
}

func handKept(f *config.File) error {
	for _, want := range []struct {
		list []string
		g    string
	}{{f.Grants.Allow, "command(my-tool --check)"}, {f.Grants.Ask, "command(my-deploy)"}, {f.Grants.Deny, "command(rm -rf /srv)"}} {
		if !slices.Contains(want.list, want.g) {
			return fmt.Errorf("hand-added %s lost", want.g)
		}
	}
	return nil
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func assertNoTempFiles(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		tmp, _ := filepath.Glob(filepath.Join(d, ".*.tmp-*"))
		if len(tmp) > 0 {
			t.Errorf("temporary files left in %s: %v", d, tmp)
		}
	}
}

// TestKilledMidWrite kills agents-setup processes at random moments (20
// with -long, else 5): the config is always the old or the new content,
// never a torn file. package setup's TestCrashAtEveryStep kills at every
// write step deterministically; this one is the random complement.
func TestKilledMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	home := pinEnv(t)
	root := filepath.Join(home, "tree")
	if err := makeJiri(root, nil); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "config.json")
	if err := os.WriteFile(cfg, []byte(handConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles := []string{"read-only", "full-access"}
	kills := 5
	if *long {
		kills = 20
	}
	for i := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTS_SETUP_TEST_MAIN=1")
		cmd.Args = append(cmd.Args, "--", "--config", cfg, "--root", root, "-p", profiles[i%2], "-a", fmt.Sprintf("make t%d", i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(60000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		f, err := config.Load(cfg)
		if err != nil {
			t.Fatalf("after kill %d: %v", i, err)
		}
		if err := handKept(f); err != nil {
			t.Fatalf("after kill %d: %v", i, err)
		}
	}
	assertNoTempFilesExceptKilled(t, home, "--config", cfg, "--root", root, "-p", "read-only")
}

// assertNoTempFilesExceptKilled checks what a killed run leaves: its
// temporary files may stay until the next run, which removes those of dead
// processes, so it runs once more and then no temporary file may be left
// anywhere under dir, nor a journal of an unfinished change.
func assertNoTempFilesExceptKilled(t *testing.T, dir string, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"agents-setup"}, args...), nil, &stdout, &stderr); code != 0 {
		t.Fatalf("the run after the kills: exit %d: %s", code, stderr.String())
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (strings.Contains(d.Name(), ".tmp-") || d.Name() == "pending.json") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("left after the next run: %v", left)
	}
}

func BenchmarkApply(b *testing.B) {
	home := pinEnv(b)
	root := filepath.Join(home, "tree")
	if err := makeJiri(root, bigManifests()); err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(home, "config.json")
	state := filepath.Join(home, "state")
	args := []string{"agents-setup", "--config", cfg, "--state-dir", state, "--root", root}
	apply := func() {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr.String())
		}
	}
	b.Run("full", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			os.Remove(cfg)
			os.RemoveAll(state)
			b.StartTimer()
			start := cpuTime()
			apply()
			cpu += cpuTime() - start
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("unchanged", func(b *testing.B) {
		apply()
		start := cpuTime()
		for b.Loop() {
			apply()
		}
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkApplyScale applies manifests of 1, 10 and 50 times Fuchsia's
// size: a full apply (no config.json, no state) and an unchanged re-run.
func BenchmarkApplyScale(b *testing.B) {
	for _, scale := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("x%d", scale), func(b *testing.B) {
			home := pinEnv(b)
			root := filepath.Join(home, "tree")
			if err := makeJiri(root, scaledManifests(scale)); err != nil {
				b.Fatal(err)
			}
			cfg := filepath.Join(home, "config.json")
			state := filepath.Join(home, "state")
			args := []string{"agents-setup", "--config", cfg, "--state-dir", state, "--root", root}
			apply := func() {
				var stdout, stderr bytes.Buffer
				if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
			}
			b.Run("full", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					os.Remove(cfg)
					os.RemoveAll(state)
					b.StartTimer()
					apply()
				}
				if fi, err := os.Stat(cfg); err == nil {
					b.ReportMetric(float64(fi.Size()), "config-bytes")
				}
			})
			b.Run("unchanged", func(b *testing.B) {
				apply()
				b.ReportAllocs()
				for b.Loop() {
					apply()
				}
			})
		})
	}
}

// bigManifests returns manifests of Fuchsia's size: about 500 lines over
// the seven category files of the root overlay.
func bigManifests() map[string]string { return scaledManifests(1) }

// scaledManifests returns bigManifests with scale times the lines, each
// distinct.
func scaledManifests(scale int) map[string]string {
	tools := []string{"git", "fx", "ffx", "jiri", "go", "cargo", "npm", "make", "ls", "cat", "grep", "find", "rm", "sed", "cp", "mv"}
	subs := []string{"status", "log", "show", "diff", "build", "test", "list", "info", "clean", "run", "check", "fmt", "doc", "version", "help", "sync", "push", "fetch", "add", "rebase", "reset", "branch", "tag", "remote", "config", "target", "component", "package", "repo", "emu", "debug"}
	cats := []string{"read_only", "local_changes", "external_changes", "device_ops", "cache_destruction", "batch_execution", "never_allow"}
	weights := []int{200, 120, 50, 50, 30, 20, 30} // 500 lines
	files := map[string]string{}
	n := 0
	for ci, c := range cats {
		var sb strings.Builder
		sb.WriteString("# " + c + "\n")
		for range weights[ci] * scale {
			tool := tools[n%len(tools)]
			sub := subs[(n/len(tools))%len(subs)]
			switch {
			case n >= 500: // past Fuchsia's size: distinct lines
				fmt.Fprintf(&sb, "%s %s y%d\n", tool, sub, n)
			case n%5 == 0:
				fmt.Fprintf(&sb, "%s %s\n", tool, sub)
			case n%5 == 1:
				fmt.Fprintf(&sb, "%s %s --verbose\n", tool, sub)
			case n%5 == 2:
				fmt.Fprintf(&sb, "%s %s -f  # forced\n", tool, sub)
			case n%5 == 3:
				fmt.Fprintf(&sb, "%s %s --all -n\n", tool, sub)
			default:
				fmt.Fprintf(&sb, "%s %s x%d\n", tool, sub, n)
			}
			n++
		}
		files[".agents/config/permissions/"+c+".txt"] = sb.String()
	}
	return files
}

// TestCrashBetweenConfigAndState simulates a process that died after
// writing the config but before writing state.json: the next run still
// knows which grants it managed, and leaves none behind as the user's.
func TestCrashBetweenConfigAndState(t *testing.T) {
	t.Parallel()
	home := pinEnv(t)
	root := filepath.Join(home, "tree")
	if err := makeJiri(root, nil); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "config.json")
	stateDir := filepath.Join(home, "state")
	if err := os.WriteFile(cfg, []byte(handConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	apply := func(extra ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"agents-setup", "--config", cfg, "--state-dir", stateDir, "--root", root}, extra...)
		if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr.String())
		}
	}
	apply("-a", "make alpha")
	saved := mustRead(t, filepath.Join(stateDir, "state.json"))
	apply("-a", "make beta")
	// The state write of the second run is lost.
	if err := os.WriteFile(filepath.Join(stateDir, "state.json"), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	apply()
	f, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := handKept(f); err != nil {
		t.Fatal(err)
	}
	if len(f.Grants.Allow) != 7 {
		t.Errorf("allow holds %d grants, want the 6 managed and the user's one", len(f.Grants.Allow))
	}
	for _, r := range f.Shim.Rules {
		if r.Category == "ad-hoc" {
			t.Errorf("ad-hoc rule left: %q", r.Line)
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used:
// on a shared machine it is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHookRunUnchanged is a hook run in process that finds the
// manifests unchanged: what a jiri update pays per project beyond starting
// the process.
func BenchmarkHookRunUnchanged(b *testing.B) {
	home := pinEnv(b)
	root := filepath.Join(home, "tree")
	if err := makeJiri(root, bigManifests()); err != nil {
		b.Fatal(err)
	}
	base := []string{"agents-setup", "--config", filepath.Join(home, "config.json"), "--state-dir", filepath.Join(home, "state"), "--root", root}
	hook := append(slices.Clone(base), "hooks", "run", "--", "0", "0", "1")
	for _, args := range [][]string{base, hook} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, nil, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
			b.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
	}
	start := cpuTime()
	for b.Loop() {
		var stdout, stderr bytes.Buffer
		run(context.Background(), hook, nil, &stdout, &stderr)
		if stderr.Len() > 0 {
			b.Fatal(stderr.String())
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	if _, err := os.Stat(filepath.Join(home, "state", "hooks.log")); err == nil {
		b.Fatal("the hook logged an error")
	}
}
