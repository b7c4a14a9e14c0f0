//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/locktest"
	"github.com/agent-shim/agent-shim/statefile"
	"github.com/google/go-cmp/cmp"
)

// A process a line left behind holds the decision log's rotation lock
// (read-only: flock needs no write access) while the log is past its
// size bound, and past twice its bound. Every hook call still answers,
// promptly and as it would with the lock free; the lines go into the full
// log, then are lost and counted. Before, every call that found the log
// full waited for the lock until the hook's deadline answered "blocked"
// (10 s), for as long as the holder lived.
func TestHookRotationLockHeld(t *testing.T) {
	// The hook's own deadline answers "blocked" past hookDeadline and
	// ends the process: here it lets the test go on and fail.
	oldExit := hookExit
	hookExit = func(int) {}
	t.Cleanup(func() { hookExit = oldExit })
	dir := t.TempDir()
	for _, kv := range pinnedEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"userSettings":{"globalPermissionGrants":{"allow":["command(git status)"],"ask":["command(git push)"],"deny":["command(git branch -D)"]}},"agentShim":{"version":1,"profile":"local-changes","rules":[]}}`), 0o600)
	commands := []string{"git status", "git push origin main", "git branch -D x", "make", "git status; rm -rf /", "curl x | sh"}
	hook := func(t *testing.T) []string {
		t.Helper()
		done := make(chan []string, 1)
		go func() {
			var got []string
			for _, c := range commands {
				in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%q}}`, proj, c)
				var out, errb strings.Builder
				code := run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, strings.NewReader(in), &out, &errb)
				got = append(got, fmt.Sprintf("%d %s", code, out.String()))
			}
			done <- got
		}()
		select {
		case got := <-done:
			return got
		case <-time.After(20 * time.Second):
			t.Fatal("the hook did not answer: it waits for the decision log's rotation lock")
			return nil
		}
	}
	want := hook(t)
	logPath := filepath.Join(dir, "xdg", "state", "agent-shim", decisionlog.FileName)

	lock := logPath + ".lock"
	os.WriteFile(lock, nil, 0o600)
	fd, err := syscall.Open(lock, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	os.Chtimes(lock, long, long)

	const maxSize = 8 << 20 // decisionlog's default
	for _, tc := range []struct {
		name     string
		size     int64
		written  bool // the lines go into the full log
		wantLost int
	}{
		{"past the bound", maxSize + 1, true, 0},
		{"past twice the bound", 2 * maxSize, false, len(commands)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := `{"time":"2026-01-01T00:00:00Z","layer":"hook","command":"x","verdict":"allow"}` + "\n"
			if err := os.WriteFile(logPath, []byte(strings.Repeat(line, int(tc.size)/len(line)+1)), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(logPath + ".lost")
			before, _ := os.Stat(logPath)
			start := time.Now()
			if diff := cmp.Diff(want, hook(t)); diff != "" {
				t.Errorf("answers changed (-lock free +lock held):\n%s", diff)
			}
			t.Logf("%d hook calls in %v", len(commands), time.Since(start))
			after, _ := os.Stat(logPath)
			if grew := after.Size() > before.Size(); grew != tc.written {
				t.Errorf("the log grew from %d to %d bytes; want lines written: %v", before.Size(), after.Size(), tc.written)
			}
			if _, err := os.Stat(logPath + ".1"); err == nil {
				t.Error("rotated under another process's lock")
			}
			if n, err := decisionlog.Lost(logPath); n != tc.wantLost || err != nil {
				t.Errorf("lines lost: %d, %v; want %d", n, err, tc.wantLost)
			}
		})
	}
}

// Another process holds config.json's lock, then the session file's. An
// "always" answer in shell mode is not kept past sessions.ConfigWait, and
// the line does not run (the person's answer could not be saved); a
// session answer that cannot be recorded holds for the line, which runs,
// with a warning, within sessions.RememberWait. Before, both waited 30 s.
func TestShellAnswerLocksHeld(t *testing.T) {
	_, cfg := testEnv(t, shellConfig)
	t.Setenv("AGENT_SHIM_SESSION", "locks-held")
	ctx := context.Background()
	settle := func(a gate.Answer, line string) (warning string, err error) {
		t.Helper()
		var warn strings.Builder
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &warn, getenv: os.Getenv}
		p := &answerer{a: a}
		s, err := e.open(ctx, openOptions{prompter: p})
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		took := locktest.Within(t, 10*time.Second, func() {
			_, err = e.shellMode().Settle(ctx, s.c, p, line, s.g.DecideBash(line))
		})
		if took > 2*time.Second {
			t.Errorf("%v for %q took %v", a, line, took)
		}
		return warn.String(), err
	}
	release := locktest.Hold(t, statefile.LockPath(cfg))
	if _, err := settle(gate.AnswerAlways, "git push a"); err == nil {
		t.Error("an always answer that could not be saved: the line runs")
	}
	release()
	s, err := (&env{getenv: os.Getenv}).open(ctx, openOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.close()
	locktest.Hold(t, statefile.LockPath(s.session.Path))
	if warning, err := settle(gate.AnswerSession, "git push b"); err != nil || !strings.Contains(warning, "warning") {
		t.Errorf("a session answer that could not be recorded: %v, warning %q; want the line to run, with a warning", err, warning)
	}
}
