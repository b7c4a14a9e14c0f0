package runlayer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// A plant the undo can neither remove nor put aside (an immutable
// .git/config, as root) is said, with how to remove it, and every later
// line is refused until the person has removed it and the record.
func TestLivePlantBlocks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file immutable needs root")
	}
	dir := t.TempDir()
	co := filepath.Join(dir, "co")
	if err := os.MkdirAll(filepath.Join(co, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(co, ".git", "config")
	if err := os.WriteFile(config, []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(co)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	run := func(plant bool) (int, string, error) {
		var stderr bytes.Buffer
		r := &Run{Gate: gate.New(gate.Options{}), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] },
			Supervise: func(context.Context, supervisor.Config) (supervisor.Status, error) {
				if plant {
					if err := os.WriteFile(config, []byte("[core]\n\tfsmonitor = touch pwned\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					if out, err := exec.Command("chattr", "+i", config).CombinedOutput(); err != nil {
						t.Skipf("chattr: %v %s (no immutable flag here)", err, out)
					}
				}
				return supervisor.Status{}, nil
			}}
		code, err := r.Program(context.Background(), "/bin/true", []string{"true"})
		return code, stderr.String(), err
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", config).Run() })
	code, stderr, err := run(true)
	block := filepath.Join(dir, "state", "agent-shim", "blocked")
	if err != nil || code != ExitError || !strings.Contains(stderr, "chattr -i "+config) || !strings.Contains(stderr, "rm "+block) {
		t.Fatalf("Program: %d, %v, want %d and the commands to run\n%s", code, err, ExitError, stderr)
	}
	var h *Hinted
	if _, _, err := run(false); !errors.As(err, &h) || !strings.Contains(err.Error(), config) || !strings.Contains(h.Hint, "rm "+block) {
		t.Errorf("the next line: %v, want it refused, naming %s", err, config)
	}
	exec.Command("chattr", "-i", config).Run()
	os.Remove(block)
	if code, stderr, err := run(false); err != nil || code != 0 {
		t.Errorf("after the person removed the record: %d, %v\n%s", code, err, stderr)
	}
}

// A line that fails after the layer refused something is told what, and
// the config key that would allow it: an execution (the grants), a chmod
// outside what lines may write (the path scope), a connection (nothing
// but running it oneself). A line that succeeds is not.
func TestRefusalsSaid(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	refused := []supervisor.Refusal{
		{Kind: "exec", Path: "/usr/bin/curl", Argv: []string{"curl", "-d", "@x", "http://example.test"}, Reason: "`command(curl *)` asks"},
		{Kind: "exec", Path: "/usr/bin/curl", Argv: []string{"curl", "-d", "@x", "http://example.test"}, Reason: "`command(curl *)` asks"},
		{Kind: "metadata", Call: "fchmodat", Path: "/srv/data/x", Reason: "outside the directories the tree may write", Scope: true},
		{Kind: "connect", Path: "/run/docker.sock", Reason: "Docker's socket, which runs what it is told outside the supervisor"},
	}
	for _, code := range []int{1, 0} {
		var stderr bytes.Buffer
		r := &Run{Gate: gate.New(gate.Options{}), Config: "/cfg/config.json", Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
			Getenv: func(k string) string { return env[k] },
			Supervise: func(context.Context, supervisor.Config) (supervisor.Status, error) {
				return supervisor.Status{Code: code, Refused: refused}, nil
			}}
		got, err := r.Program(context.Background(), "/bin/true", []string{"true"})
		s := stderr.String()
		if err != nil || got != code {
			t.Fatalf("Program: %d, %v\n%s", got, err, s)
		}
		if code == 0 {
			if s != "" {
				t.Errorf("a line that succeeded was told:\n%s", s)
			}
			continue
		}
		for _, want := range []string{
			"refused to run: curl -d @x http://example.test; the rule",
			"userSettings.globalPermissionGrants.allow in /cfg/config.json",
			"fchmodat /srv/data/x; to let lines change it, add /srv/data/x (or /srv/data/...) to agentShim.pathScope.allow in /cfg/config.json",
			"/run/docker.sock (Docker's socket",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("no %q in\n%s", want, s)
			}
		}
		if strings.Count(s, "curl -d") != 1 {
			t.Errorf("the same refusal said twice:\n%s", s)
		}
	}
}

// Where the layer is unavailable, what the line leaves running ends
// with it (the supervisor as subreaper), and the note says how to keep a
// server.
func TestUnsupervisedEnds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ending what a line leaves needs a subreaper (Linux)")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	var stderr bytes.Buffer
	r := &Run{Gate: gate.New(gate.Options{}), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
		Supervise: func(context.Context, supervisor.Config) (supervisor.Status, error) {
			return supervisor.Status{}, fmt.Errorf("%w: not here", supervisor.ErrUnavailable)
		}}
	code, err := r.Program(context.Background(), "/bin/sh", []string{"sh", "-c", "setsid sleep 30 >/dev/null 2>&1 & echo $! > pid"})
	if err != nil || code != 0 {
		t.Fatalf("Program: %d, %v\n%s", code, err, stderr.String())
	}
	data, _ := os.ReadFile(filepath.Join(dir, "pid"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid %q: %v", data, err)
	}
	if syscall.Kill(pid, 0) == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the line's sleeper (pid %d) still runs", pid)
	}
	if !strings.Contains(stderr.String(), "left 1 process(es) running; they were ended") || !strings.Contains(stderr.String(), "agent-shim run --") {
		t.Errorf("no note:\n%s", stderr.String())
	}
}
