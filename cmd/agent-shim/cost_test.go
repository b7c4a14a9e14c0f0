package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
)

var agentsSetupBin = flag.String("agents-setup", "", "use this agents-setup binary instead of building ../agents-setup")

// pinnedEnv is an environment with HOME and the XDG directories under dir.
func pinnedEnv(dir string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg", "config"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "xdg", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg", "cache"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "xdg", "data"),
	}
}

// origEnv is the environment the tests started with, before they pin HOME:
// the go command keeps its caches under the real one.
var origEnv = os.Environ()

// buildBinary builds ./cmd/<name> into dir.
func buildBinary(t testing.TB, dir, name string) string {
	t.Helper()
	if name == "agents-setup" && *agentsSetupBin != "" {
		return *agentsSetupBin
	}
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "../"+name) // as README installs it
	cmd.Env = origEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// fuchsiaConfig writes a config.json of the full Fuchsia size with
// agents-setup: a git checkout whose manifests are the built-in defaults
// (agents-setup --init) plus read-only rules up to Fuchsia's 385.
func fuchsiaConfig(t testing.TB, dir string, env []string) string {
	t.Helper()
	return scaledFuchsiaConfig(t, dir, env, 1)
}

// scaledFuchsiaConfig is fuchsiaConfig with scale times its rules.
func scaledFuchsiaConfig(t testing.TB, dir string, env []string, scale int) string {
	t.Helper()
	setup := buildBinary(t, dir, "agents-setup")
	ck := filepath.Join(dir, "ck")
	if err := os.MkdirAll(filepath.Join(ck, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "home", ".gemini", "config", "config.json")
	runSetup := func(args ...string) {
		cmd := exec.Command(setup, append([]string{"--root", ck, "--config", cfg}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("agents-setup %q: %v\n%s", args, err, out)
		}
	}
	runSetup("--init")
	rnd := rand.New(rand.NewSource(1))
	progs := []string{"fx", "ffx", "jiri", "cipd", "gn", "ninja", "bazel", "cargo", "go", "npm", "make", "cmake"}
	subs := []string{"build", "test", "status", "list", "show", "info", "log", "check", "fmt", "lint", "query", "describe", "inspect", "doctor", "target", "component", "package", "repo", "update"}
	seen := map[string]bool{}
	var extra []string
	// Fuchsia's manifests hold 385 rules: the built-in ones that --init
	// wrote, and as many more as it takes.
	want := 385*scale - manifestRules(t, filepath.Join(ck, ".agents", "config", "permissions"))
	for len(extra) < want {
		l := fmt.Sprintf("%s %s %s%d", progs[rnd.Intn(len(progs))], subs[rnd.Intn(len(subs))], subs[rnd.Intn(len(subs))], rnd.Intn(100*scale))
		if !seen[l] {
			seen[l] = true
			extra = append(extra, l)
		}
	}
	ro := filepath.Join(ck, ".agents", "config", "permissions", "read_only.txt")
	f, err := os.OpenFile(ro, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, strings.Join(extra, "\n"))
	f.Close()
	runSetup()
	c, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Grants.Allow) + len(c.Grants.Ask) + len(c.Grants.Deny); n < 380*scale || len(c.Shim.Rules) < 380*scale {
		t.Fatalf("config has %d grants and %d rules, want about %d", n, len(c.Shim.Rules), 385*scale)
	}
	return cfg
}

// manifestRules counts the rule lines of the manifests in dir.
func manifestRules(t testing.TB, dir string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				n++
			}
		}
	}
	return n
}

// BenchmarkHook is one hook call in process (no exec, no runtime start) on
// a config of the full Fuchsia size, with the gate's compact copy warm.
func BenchmarkHook(b *testing.B) {
	dir := b.TempDir()
	env := pinnedEnv(dir)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	cfg := fuchsiaConfig(b, dir, env)
	in := fmt.Sprintf(`{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status && fx build"},"tool_use_id":"t1"}`, filepath.Join(dir, "ck"))
	args := []string{"agent-shim", "hook", "claude-code", "--config", cfg}
	var stderr strings.Builder
	for b.Loop() {
		var out strings.Builder
		if code := run(b.Context(), args, strings.NewReader(in), &out, &stderr); code != 0 || !strings.Contains(out.String(), `"allow"`) {
			b.Fatalf("exit %d: %s%s", code, out.String(), stderr.String())
		}
	}
}
