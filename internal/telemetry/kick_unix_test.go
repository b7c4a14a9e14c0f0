//go:build unix

package telemetry

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStartDetached: the exporter is started in a session of its own and
// runs on after the call returns (a harmless payload: touch a marker in a
// temp dir once the caller is long gone).
func TestStartDetached(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "marker")
	start := time.Now()
	if err := startDetached(sh, []string{"sh", "-c", `sleep 0.3; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; sleep 2`, "sh", marker}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 250*time.Millisecond {
		t.Errorf("startDetached waited %v for the program", took)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(marker)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			sid, err := unix.Getsid(pid)
			if err != nil {
				t.Fatalf("the program left early: %v", err)
			}
			if sid != pid {
				t.Errorf("the program is in session %d, not one of its own (%d)", sid, pid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the detached program never ran")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKickStampNoWait: a stamp that is a FIFO or a link does not stall a
// hook's Kick, and a link is not followed to create its target.
func TestKickStampNoWait(t *testing.T) {
	start = func(string, []string) error { return nil }
	t.Cleanup(func() { start = startDetached })
	on := envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
	for _, kind := range []string{"fifo", "link"} {
		dir := filepath.Join(t.TempDir(), "agent-shim")
		os.MkdirAll(dir, 0o700)
		logPath := filepath.Join(dir, "decisions.jsonl")
		stamp := StampPath(on, logPath)
		target := filepath.Join(t.TempDir(), "target")
		switch kind {
		case "fifo":
			if err := unix.Mkfifo(stamp, 0o600); err != nil {
				t.Fatal(err)
			}
		case "link":
			if err := os.Symlink(target, stamp); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- Kick(on, logPath, "", time.Now()) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Kick waited on the stamp", kind)
		}
		if _, err := os.Lstat(target); err == nil {
			t.Errorf("%s: Kick created the link's target", kind)
		}
	}
}
