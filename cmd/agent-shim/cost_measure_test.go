//go:build measure

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The measurement is a test of its own build tag, so that the ordinary
// test run neither skips it nor pays for it.
var hookCost = flag.Int("hookcost", 200, "paired runs of TestHookCost")

// TestHookCost measures one hook call with a config of the full Fuchsia
// size (the built-in manifests plus more rules up to 385 grants, managed,
// with the agentShim.rules section) in paired, interleaved runs against
// `bash -c true`, against a minimal Go hook (testdata/minhook: decode the
// input, parse and walk the command with mvdan.cc/sh, print an answer),
// and against itself with 50 times the rules. It fails when the hook's
// median CPU time (user+system) is over 1.15 times the minimal hook's,
// or its CPU at 50 times the rules over 1.2 times its CPU at Fuchsia
// size. It builds agent-shim, agents-setup and the minimal hook; run it
// with
//
//	go test -tags measure -run TestHookCost -v ./cmd/agent-shim -hookcost 400
func TestHookCost(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	dir := t.TempDir()
	env := pinnedEnv(dir)
	shimBin := buildBinary(t, dir, "agent-shim")
	hello := buildHello(t, dir)
	minhook := filepath.Join(dir, "minhook")
	build := exec.Command("go", "build", "-o", minhook, "./testdata/minhook")
	build.Env = origEnv
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the minimal hook: %v\n%s", err, out)
	}
	cfg := fuchsiaConfig(t, dir, env)
	cfg50 := scaledFuchsiaConfig(t, filepath.Join(dir, "x50"), env, 50)

	input := filepath.Join(dir, "input.json")
	hookJSON := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status && fx build"},"tool_use_id":"t1"}`, filepath.Join(dir, "ck"))
	if err := os.WriteFile(input, []byte(hookJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	// run returns the wall and CPU (user+system) time of one process.
	run := func(stdin string, name string, args ...string) (wall, cpu time.Duration) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if stdin != "" {
			in, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd.Stdin = in
		}
		start := time.Now()
		out, err := cmd.Output()
		wall = time.Since(start)
		if err != nil {
			t.Fatalf("%s %q: %v: %s", name, args, err, out)
		}
		if stdin != "" && !strings.Contains(string(out), `"allow"`) {
			t.Fatalf("%s: %s", name, out)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	variants := []struct {
		name string
		f    func() (time.Duration, time.Duration)
	}{
		{"bash -c true", func() (time.Duration, time.Duration) { return run("", bash, "-c", "true") }},
		{"hook claude-code", func() (time.Duration, time.Duration) {
			return run(input, shimBin, "hook", "claude-code", "--config", cfg)
		}},
		{"minimal Go hook", func() (time.Duration, time.Duration) { return run(input, minhook) }},
		{"hook claude-code, 50x the rules", func() (time.Duration, time.Duration) {
			return run(input, shimBin, "hook", "claude-code", "--config", cfg50)
		}},
		{"an empty Go program", func() (time.Duration, time.Duration) { return run("", hello) }},
	}
	const (
		bashRun  = 0
		hook     = 1
		minimal  = 2
		hook50   = 3
		variantN = 5
	)
	for range 20 { // warm up the page cache and the compact copies
		for _, v := range variants {
			v.f()
		}
	}
	n := *hookCost
	var walls, cpus [variantN][]float64
	for i := range n {
		for j := range variants {
			k := (i + j) % len(variants) // rotate the order
			w, c := variants[k].f()
			walls[k] = append(walls[k], w.Seconds()*1e3)
			cpus[k] = append(cpus[k], c.Seconds()*1e3)
		}
	}
	med := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
	// ratio is the median of the paired ratios a[i]/b[i].
	ratio := func(a, b []float64) float64 {
		var r []float64
		for i := range a {
			if b[i] > 0 {
				r = append(r, a[i]/b[i])
			}
		}
		return med(r)
	}
	for k, v := range variants {
		t.Logf("%-34s wall %6.2f ms (%.2fx bash -c true), cpu %6.2f ms (%.2fx)", v.name,
			med(walls[k]), ratio(walls[k], walls[bashRun]), med(cpus[k]), ratio(cpus[k], cpus[bashRun]))
	}
	// CPU times are counted in scheduler ticks on some kernels: compare
	// the sums, not per-run ratios, for the bars.
	sum := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	vsMin := sum(cpus[hook]) / sum(cpus[minimal])
	vs1 := sum(cpus[hook50]) / sum(cpus[hook])
	t.Logf("cpu: hook / minimal Go hook %.2f (bar 1.15); hook at 50x / hook at 1x %.2f (bar 1.2)", vsMin, vs1)
	if vsMin > 1.15 {
		t.Errorf("hook: %.2f times the CPU of the minimal Go hook over %d paired runs, want <= 1.15", vsMin, n)
	}
	if vs1 > 1.2 {
		t.Errorf("hook: %.2f times its CPU at 50x the rules, want <= 1.2", vs1)
	}
}

// buildHello builds an empty Go program: the floor of any Go process.

func buildHello(t testing.TB, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hello-bin")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir, cmd.Env = src, append(origEnv, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building hello: %v\n%s", err, out)
	}
	return bin
}
