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
// size (the built-in manifests plus 206 more rules: 385 grants, managed,
// with the agentShim.rules section) against `bash -c true`, in paired runs,
// and fails when the median ratio is over 1.3. It builds agent-shim and
// agents-setup; run it with
//
//	go test -tags measure -run TestHookCost -hookcost 400 ./cmd/agent-shim
func TestHookCost(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	dir := t.TempDir()
	env := pinnedEnv(dir)
	shimBin := buildBinary(t, dir, "agent-shim")
	hello := buildHello(t, dir)
	cfg := fuchsiaConfig(t, dir, env)

	input := filepath.Join(dir, "input.json")
	hookJSON := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status && fx build"},"tool_use_id":"t1"}`, filepath.Join(dir, "ck"))
	if err := os.WriteFile(input, []byte(hookJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(extraEnv []string, stdin string, name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = append(env, extraEnv...)
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
		d := time.Since(start)
		if err != nil {
			t.Fatalf("%s %q: %v: %s", name, args, err, out)
		}
		if stdin != "" && !strings.Contains(string(out), `"allow"`) {
			t.Fatalf("hook: %s", out)
		}
		return d
	}
	variants := []struct {
		name string
		f    func() time.Duration
	}{
		{"bash -c true", func() time.Duration { return run(nil, "", bash, "-c", "true") }},
		{"hook claude-code", func() time.Duration { return run(nil, input, shimBin, "hook", "claude-code", "--config", cfg) }},
		{"agent-shim --help (the process alone)", func() time.Duration { return run(nil, "", shimBin, "--help") }},
		{"an empty Go program (the runtime alone)", func() time.Duration { return run(nil, "", hello) }},
	}
	for range 20 { // warm up the page cache and the compact copy
		for _, v := range variants {
			v.f()
		}
	}
	n := *hookCost
	times := make([][]float64, len(variants))
	ratios := make([][]float64, len(variants))
	for i := range n {
		d := make([]time.Duration, len(variants))
		for j := range variants {
			k := (i + j) % len(variants) // rotate the order
			d[k] = variants[k].f()
		}
		for k := range variants {
			times[k] = append(times[k], d[k].Seconds()*1e3)
			ratios[k] = append(ratios[k], d[k].Seconds()/d[0].Seconds())
		}
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	for k, v := range variants {
		t.Logf("%-40s median %6.2f ms, median ratio to bash -c true %.2f", v.name, med(times[k]), med(ratios[k]))
	}
	if ratio := med(ratios[1]); ratio > 1.3 {
		t.Errorf("hook: median ratio %.2f > 1.3 over %d paired runs", ratio, n)
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
