//go:build measure && linux && (amd64 || arm64)

package supervisor

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

var (
	execCostBase = flag.String("execcostbase", "", "an agent-shim `binary` to measure beside this one (an earlier build)")
	execCost     = flag.Int("execcost", 20, "rounds of TestExecCost")
	execCostRun  = flag.String("execcostrun", "", "run only the variants of TestExecCost whose names match this `regexp`")
)

// TestExecCost measures the run-time layer's CPU against its yardsticks,
// whole processes, in rounds that run every variant once in a rotating
// order, and reports medians:
//
//   - 300 executions of /bin/true from one bash: plain; under the floor
//     of any seccomp-notify exec gate (testdata/floor.c: a C supervisor
//     that answers every execve "continue" at once and reads nothing);
//     under `agent-shim run` (every exec decided by the default policy,
//     writes confined). Target: agent-shim within 1.15× the floor.
//   - a line of one execution: what the layer adds to shell mode
//     (`agent-shim -c 'seq 1'`, runtime "on" against "off", which execs
//     bash) and to `agent-shim run -- /bin/true`, against what bubblewrap
//     adds to `bash -c 'seq 1'` (a read-only root, the checkout and /tmp
//     writable, its own /dev and /proc; no PID namespace, whose processes'
//     CPU no parent is charged with). Target: within bubblewrap's + 1 ms.
//   - `make -s -B -j2` of 40 small C files: plain, and under agent-shim
//     run. Target: ≤ 1.1×.
//
// The supervisor alone (this test binary's "supervise" helper: Run with a
// decider that allows all) is shown beside agent-shim. Run it with
//
//	go test -tags measure -run TestExecCost -v ./internal/supervisor -execcost 20
//
// and -execcostbase BINARY to measure an earlier agent-shim beside it.
func TestExecCost(t *testing.T) {
	needKernel(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler for the floor")
	}
	dir := t.TempDir()
	floor := filepath.Join(dir, "floor")
	if out, err := exec.Command(cc, "-O2", "-o", floor, "testdata/floor.c", "-lpthread").CombinedOutput(); err != nil {
		t.Fatalf("building the floor: %v\n%s", err, out)
	}
	shim := filepath.Join(dir, "agent-shim")
	if out, err := exec.Command("go", "build", "-o", shim, "../../cmd/agent-shim").CombinedOutput(); err != nil {
		t.Fatalf("building agent-shim: %v\n%s", err, out)
	}
	self, _ := os.Executable()
	ck := filepath.Join(dir, "ck")
	home := filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ck, ".git", "hooks"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A checkout as git makes it: the layer makes its protected paths
	// read-only (a mount namespace), which the one-exec line pays for.
	for f, c := range map[string]string{".git/config": "[core]\n\tbare = false\n", ".git/HEAD": "ref: refs/heads/main\n",
		".git/hooks/pre-commit.sample": "#!/bin/sh\n", ".git/description": "x\n"} {
		if err := os.WriteFile(filepath.Join(ck, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share")}
	on, off := filepath.Join(dir, "on", "config.json"), filepath.Join(dir, "off", "config.json")
	for cfg, mode := range map[string]string{on: "on", off: "off"} {
		os.MkdirAll(filepath.Dir(cfg), 0o755)
		os.WriteFile(cfg, []byte(`{"userSettings": {"globalPermissionGrants": {"allow": ["command(seq)"]}}, "agentShim": {"runtime": "`+mode+`"}}`), 0o600)
	}
	// 40 small C files and their Makefile.
	var objs []string
	for i := range 40 {
		src := fmt.Sprintf("#include <stdio.h>\nint f%d(int x) { return x * %d + 1; }\n", i, i)
		os.WriteFile(filepath.Join(ck, fmt.Sprintf("f%d.c", i)), []byte(src), 0o644)
		objs = append(objs, fmt.Sprintf("f%d.o", i))
	}
	os.WriteFile(filepath.Join(ck, "Makefile"), []byte("all: "+strings.Join(objs, " ")+"\n%.o: %.c\n\tcc -c -O1 -o $@ $<\n"), 0o644)

	const loop = `for i in $(seq 300); do /bin/true; done`
	bash := "/bin/bash"
	run := func(argv ...string) []string { return argv }
	shimRun := func(cfg string, argv ...string) []string {
		return append([]string{shim, "run", "--config", cfg, "--"}, argv...)
	}
	bwrap, _ := exec.LookPath("bwrap")
	bw := func(argv ...string) []string {
		return append([]string{bwrap, "--ro-bind", "/", "/", "--bind", ck, ck, "--bind", "/tmp", "/tmp",
			"--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--"}, argv...)
	}
	// Shell mode reads the config of $GEMINI_CONFIG_DIR.
	shell := func(cfg string, line string) []string {
		return []string{"/usr/bin/env", "GEMINI_CONFIG_DIR=" + filepath.Dir(cfg), shim, "-c", line}
	}
	type variant struct {
		name string
		argv []string
	}
	variants := []variant{
		{"loop: plain bash", run(bash, "-c", loop)},
		{"loop: floor", run(floor, bash, "-c", loop)},
		{"loop: supervisor", run(self, "supervise", bash, "-c", loop)},
		{"loop: agent-shim run", shimRun(on, bash, "-c", loop)},
		{"one: /bin/true", run("/bin/true")},
		{"one: agent-shim run, layer off", shimRun(off, "/bin/true")},
		{"one: agent-shim run, layer on", shimRun(on, "/bin/true")},
		{"line: bash -c 'seq 1'", run("/usr/bin/env", bash, "-c", "seq 1")},
		{"line: shell mode, layer off", shell(off, "seq 1")},
		{"line: shell mode, layer on", shell(on, "seq 1")},
		{"make: plain", run("make", "-s", "-B", "-j2")},
		{"make: agent-shim run", shimRun(on, "make", "-s", "-B", "-j2")},
	}
	if base := *execCostBase; base != "" {
		with := func(argv []string) []string {
			argv = slices.Clone(argv)
			for i, a := range argv {
				if a == shim {
					argv[i] = base
				}
			}
			return argv
		}
		for _, v := range slices.Clone(variants) {
			if strings.Contains(v.name, "agent-shim") || strings.Contains(v.name, "shell mode") {
				variants = append(variants, variant{"base " + v.name, with(v.argv)})
			}
		}
	}
	if bwrap != "" {
		variants = append(variants, variant{"one: bubblewrap", bw("/bin/true")},
			variant{"line: bubblewrap bash -c 'seq 1'", append([]string{"/usr/bin/env"}, bw(bash, "-c", "seq 1")...)})
	} else {
		t.Log("no bwrap: bubblewrap's figure is missing")
	}
	if *execCostRun != "" {
		re := regexp.MustCompile(*execCostRun)
		variants = slices.DeleteFunc(variants, func(v variant) bool { return !re.MatchString(v.name) })
	}
	cpu := func(v variant) float64 {
		cmd := exec.Command(v.argv[0], v.argv[1:]...)
		cmd.Env, cmd.Dir = env, ck
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", v.name, err, out)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	for _, v := range variants { // warm up
		cpu(v)
	}
	ms := make(map[string][]float64)
	for i := range *execCost {
		for j := range variants {
			v := variants[(i+j)%len(variants)]
			ms[v.name] = append(ms[v.name], cpu(v))
		}
	}
	med := func(name string) float64 {
		xs := slices.Clone(ms[name])
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	for _, v := range variants {
		t.Logf("%-34s median %8.2f ms CPU", v.name, med(v.name))
	}
	// Ratios of medians (NaN or Inf where a variant did not run); the
	// rounds interleave the variants.
	t.Logf("loop: floor / plain             %.3f", med("loop: floor")/med("loop: plain bash"))
	t.Logf("loop: supervisor / floor        %.3f", med("loop: supervisor")/med("loop: floor"))
	t.Logf("loop: agent-shim run / floor    %.3f   (target ≤ 1.15)", med("loop: agent-shim run")/med("loop: floor"))
	t.Logf("one: the layer adds             %.2f ms (agent-shim run, on - off)", med("one: agent-shim run, layer on")-med("one: agent-shim run, layer off"))
	if bwrap != "" {
		t.Logf("one: bubblewrap adds            %.2f ms   (target: the layer ≤ this + 1 ms)", med("one: bubblewrap")-med("one: /bin/true"))
	}
	t.Logf("line: the layer adds            %.2f ms (agent-shim -c 'seq 1', on - off)", med("line: shell mode, layer on")-med("line: shell mode, layer off"))
	if bwrap != "" {
		t.Logf("line: bubblewrap adds           %.2f ms   (target: the layer ≤ this + 1 ms)", med("line: bubblewrap bash -c 'seq 1'")-med("line: bash -c 'seq 1'"))
	}
	t.Logf("make: agent-shim run / plain    %.3f   (target ≤ 1.1)", med("make: agent-shim run")/med("make: plain"))
	if *execCostBase != "" {
		t.Logf("base: loop: agent-shim run / floor  %.3f", med("base loop: agent-shim run")/med("loop: floor"))
		t.Logf("base: one: the layer adds          %.2f ms", med("base one: agent-shim run, layer on")-med("base one: agent-shim run, layer off"))
		t.Logf("base: line: the layer adds         %.2f ms", med("base line: shell mode, layer on")-med("base line: shell mode, layer off"))
		t.Logf("base: make: agent-shim run / plain %.3f", med("base make: agent-shim run")/med("make: plain"))
	}
}

func init() {
	// supervise PROGRAM ARGS: run PROGRAM under the supervisor, every
	// execution allowed, writes confined to the working directory and
	// /tmp; exit with its status.
	helpers["supervise"] = func(args []string) int {
		wd, _ := os.Getwd()
		path, err := exec.LookPath(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 127
		}
		st, err := runForMeasure(path, args, wd)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 126
		}
		return st.ExitCode()
	}
}

// runForMeasure runs path under the supervisor as agent-shim would, with
// a decider that allows all.
func runForMeasure(path string, argv []string, wd string) (Status, error) {
	return Run(context.Background(), Config{
		Path: path, Argv: argv, Env: os.Environ(), Dir: wd,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr,
		Confine: true, Writable: []string{wd, "/tmp", "/dev/null"},
		Decide:   func(x Exec) Verdict { x.Spellings(); return Verdict{Allow: true} },
		Programs: []string{"git", "curl", "rm", "touch"},
	})
}
