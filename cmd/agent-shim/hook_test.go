package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHookDeadline: a hook call that cannot decide in time answers
// "blocked" itself (exit 2) before the agent's timeout would let the call
// through: a FIFO where config.json should be, and a deadline nothing
// can meet.
func TestHookDeadline(t *testing.T) {
	dir, cfg := testEnv(t, "")
	_, proj := checkout(t, dir)
	if err := syscall.Mkfifo(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	in := `{"session_id":"d","cwd":"` + proj + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"}}`
	call := func() (int, string, time.Duration) {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := run(context.Background(), []string{"agent-shim", "hook", "claude-code", "--config", cfg}, strings.NewReader(in), &stdout, &stderr)
		if stdout.Len() > 0 {
			t.Errorf("blocked with output %q", stdout.String())
		}
		return code, stderr.String(), time.Since(start)
	}
	old := hookDeadline
	t.Cleanup(func() { hookDeadline = old })
	hookDeadline = 2 * time.Second
	if code, stderr, took := call(); code != exitBlock || took > 3*time.Second {
		t.Errorf("a FIFO at config.json: exit %d after %v: %s", code, took, stderr)
	}
	// A decision that does not come: the deadline answers.
	// The stalled decision goes on only once the deadline's timer has
	// answered and would have ended the process (hookExit).
	release := make(chan struct{})
	exited := -1
	t.Cleanup(func() { hookStall, hookExit = nil, os.Exit })
	hookStall = func() {
		select {
		case <-release:
		case <-time.After(5 * time.Second): // no timer: the test fails, not hangs
		}
	}
	hookExit = func(code int) { exited = code; close(release) }
	hookDeadline = 50 * time.Millisecond
	code, stderr, took := call()
	if exited != exitBlock {
		t.Errorf("past the deadline: the process was not ended with exit %d (hookExit(%d))", exitBlock, exited)
	}
	if code != exitBlock || !strings.Contains(stderr, "no decision within") || took > 2*time.Second {
		t.Errorf("past the deadline: exit %d after %v: %s", code, took, stderr)
	}
}
