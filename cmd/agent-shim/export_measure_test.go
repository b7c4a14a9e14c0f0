//go:build measure

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// getenvOf is a getenv of an environment list.
func getenvOf(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// TestExportCost measures a hook call's CPU (user+system of the hook
// process) with decision export configured against without, in paired,
// interleaved runs: export to a receiver that answers (a minimal OTLP/HTTP
// endpoint of this test's own, not a collector), export to a collector
// that is down (a closed port), export configured by config.json's
// agentShim.telemetry alone, and the one call per interval that starts
// the exporter (the stamp removed before each run). It fails when a
// configured, not-due call costs more than 1.1 times a call without
// export. Run it with
//
//	go test -tags measure -run TestExportCost -v ./cmd/agent-shim -hookcost 200
func TestExportCost(t *testing.T) {
	dir := t.TempDir()
	env := pinnedEnv(dir)
	shimBin := buildBinary(t, dir, "agent-shim")
	buildBinary(t, dir, "agent-shim-export") // beside agent-shim, where the hook looks
	cfg := fuchsiaConfig(t, dir, env)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()

	input := filepath.Join(dir, "input.json")
	hookJSON := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status && fx build"},"tool_use_id":"t1"}`, filepath.Join(dir, "ck"))
	if err := os.WriteFile(input, []byte(hookJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "xdg", "state", "agent-shim")
	run := func(env []string) (wall, cpu time.Duration) {
		cmd := exec.Command(shimBin, "hook", "claude-code", "--config", cfg)
		cmd.Env = env
		in, err := os.Open(input)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd.Stdin = in
		start := time.Now()
		out, err := cmd.Output()
		wall = time.Since(start)
		if err != nil || !strings.Contains(string(out), `"allow"`) {
			t.Fatalf("hook: %v: %s", err, out)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	with := func(endpoint string) []string {
		return append(slices.Clone(env), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_BLRP_SCHEDULE_DELAY=3600000")
	}
	// Export by config.json's agentShim.telemetry alone: the same policy
	// with the section, as the agent's config.json (GEMINI_CONFIG_DIR).
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `"agentShim": {`)
	if i < 0 {
		t.Fatal("no agentShim in the config")
	}
	i += len(`"agentShim": {`)
	sectionDir := filepath.Join(dir, "with-section")
	if err := os.MkdirAll(sectionDir, 0o700); err != nil {
		t.Fatal(err)
	}
	withSection := string(data[:i]) + fmt.Sprintf(`"telemetry": {"endpoint": %q, "interval": "1h"}, `, srv.URL) + string(data[i:])
	if err := os.WriteFile(filepath.Join(sectionDir, "config.json"), []byte(withSection), 0o600); err != nil {
		t.Fatal(err)
	}
	bySection := append(slices.Clone(env), "GEMINI_CONFIG_DIR="+sectionDir)
	variants := []struct {
		name string
		f    func() (time.Duration, time.Duration)
	}{
		{"hook, no export", func() (time.Duration, time.Duration) { return run(env) }},
		{"hook, export, collector up", func() (time.Duration, time.Duration) { return run(with(srv.URL)) }},
		{"hook, export, collector down", func() (time.Duration, time.Duration) { return run(with(down)) }},
		{"hook, export due (starts it)", func() (time.Duration, time.Duration) {
			os.Remove(telemetry.StampPath(getenvOf(with(srv.URL)), filepath.Join(stateDir, "decisions.jsonl")))
			return run(with(srv.URL))
		}},
		{"hook, export by the section", func() (time.Duration, time.Duration) { return run(bySection) }},
	}
	const (
		none    = 0
		up      = 1
		dead    = 2
		due     = 3
		section = 4
	)
	for range 10 {
		for _, v := range variants {
			v.f()
		}
	}
	n := *hookCost
	var walls, cpus [5][]float64
	for i := range n {
		for j := range variants {
			k := (i + j) % len(variants)
			w, c := variants[k].f()
			walls[k] = append(walls[k], w.Seconds()*1e3)
			cpus[k] = append(cpus[k], c.Seconds()*1e3)
		}
	}
	med := func(xs []float64) float64 { xs = slices.Clone(xs); slices.Sort(xs); return xs[len(xs)/2] }
	sum := func(xs []float64) (s float64) {
		for _, x := range xs {
			s += x
		}
		return s
	}
	for k, v := range variants {
		t.Logf("%-30s wall %6.2f ms, cpu %6.2f ms (sum %.2fx no export)", v.name, med(walls[k]), med(cpus[k]), sum(cpus[k])/sum(cpus[none]))
	}
	for _, k := range []int{up, dead, section} {
		if r := sum(cpus[k]) / sum(cpus[none]); r > 1.1 {
			t.Errorf("%s: %.2f times the CPU of a hook call without export over %d paired runs, want <= 1.1", variants[k].name, r, n)
		}
	}
	// Let the exporters leave before the directory goes: the lock free
	// twice, a few seconds apart (one started last may not hold it yet).
	lock := flock.New(filepath.Join(stateDir, telemetry.LockName))
	free := 0
	for deadline := time.Now().Add(2 * time.Minute); free < 2 && time.Now().Before(deadline); time.Sleep(3 * time.Second) {
		if ok, err := lock.TryLock(); err == nil && ok {
			lock.Unlock()
			free++
		} else {
			free = 0
		}
	}
	if free < 2 {
		t.Error("an exporter was still running after two minutes")
	}
}
