//go:build measure

package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/supervisor"
	"golang.org/x/sys/unix"
)

var runtimeCost = flag.Int("runtimecost", 30, "paired runs of TestRuntimeCost")

// TestRuntimeCost measures a loop of 300 executions of /bin/true under the
// run-time layer (`agent-shim run -- bash -c LOOP`, the policy of the full
// Fuchsia size, local-changes: every exec decided, writes confined)
// against the same loop in plain bash, whole processes, in paired runs,
// and fails when the median ratio is over 2. Run it with
//
//	go test -tags measure -run TestRuntimeCost -v ./cmd/agent-shim -runtimecost 60
func TestRuntimeCost(t *testing.T) {
	if ok, why := supervisor.Available(); !ok {
		skipLacking(t, "the kernel lacks the run-time layer: %s", why)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	dir := t.TempDir()
	env := pinnedEnv(dir)
	shimBin := buildBinary(t, dir, "agent-shim")
	cfg := fuchsiaConfig(t, dir, env)
	ck := filepath.Join(dir, "ck")
	const loop = `for i in $(seq 300); do /bin/true; done`
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, ck
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return time.Since(start)
	}
	variants := []struct {
		name string
		f    func() time.Duration
	}{
		{"bash loop", func() time.Duration { return run(bash, "-c", loop) }},
		{"agent-shim run -- bash loop", func() time.Duration { return run(shimBin, "run", "--config", cfg, "--", bash, "-c", loop) }},
	}
	for range 3 { // warm up
		for _, v := range variants {
			v.f()
		}
	}
	n := *runtimeCost
	times := make([][]float64, len(variants))
	var ratios []float64
	for i := range n {
		d := make([]time.Duration, len(variants))
		for j := range variants {
			k := (i + j) % len(variants) // rotate the order
			d[k] = variants[k].f()
		}
		for k := range variants {
			times[k] = append(times[k], d[k].Seconds()*1e3)
		}
		ratios = append(ratios, d[1].Seconds()/d[0].Seconds())
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	for k, v := range variants {
		t.Logf("%-30s median %7.1f ms", v.name, med(times[k]))
	}
	ratio := med(ratios)
	t.Logf("median ratio %.2f over %d paired runs (%.1f µs per exec added)", ratio, n, (med(times[1])-med(times[0]))*1e3/300)
	if ratio > 2 {
		t.Errorf("median ratio %.2f > 2 over %d paired runs", ratio, n)
	}
}

// childCPU is the CPU time of the waited-for children, in ms.
func childCPU() float64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_CHILDREN, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// BenchmarkOneExecLine is the CPU of a line that executes one program
// (seq 1) under the run-time layer (`agent-shim run`, the policy of the
// full Fuchsia size, local-changes), beside the same program run
// plainly, measured in turns: ms-cpu/line each, and the layer's
// overhead. Target: ≤ 13 ms over plain (bubblewrap's). Run it with
//
//	go test -tags measure -run XXX -bench OneExecLine -benchtime 50x ./cmd/agent-shim
func BenchmarkOneExecLine(b *testing.B) {
	if ok, why := supervisor.Available(); !ok {
		skipLacking(b, "the kernel lacks the run-time layer: %s", why)
	}
	dir := b.TempDir()
	env := pinnedEnv(dir)
	shimBin := buildBinary(b, dir, "agent-shim")
	cfg := fuchsiaConfig(b, dir, env)
	seq, err := exec.LookPath("seq")
	if err != nil {
		b.Skip("no seq")
	}
	run := func(name string, args ...string) float64 {
		cmd := exec.CommandContext(context.Background(), name, args...)
		cmd.Env, cmd.Dir = env, filepath.Join(dir, "ck")
		before := childCPU()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		return childCPU() - before
	}
	var plain, layered float64
	for b.Loop() {
		plain += run(seq, "1")
		layered += run(shimBin, "run", "--config", cfg, "--", seq, "1")
	}
	n := float64(b.N)
	b.ReportMetric(plain/n, "plain-ms-cpu/line")
	b.ReportMetric(layered/n, "layer-ms-cpu/line")
	b.ReportMetric((layered-plain)/n, "overhead-ms-cpu/line")
}
