//go:build unix

package otlp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/otlp/otlptest"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// TestExportLockHeldByStranger: a process that is not an exporter (one a
// line left behind) holds export.lock, read-only, and has for an hour.
// Before, every exporter took it for another at work and left: the
// decisions never went out. Now the export goes on, within the deadline.
func TestExportLockHeldByStranger(t *testing.T) {
	rc := &otlptest.Receiver{Status: http.StatusOK}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	logPath := filepath.Join(t.TempDir(), "state", decisionlog.FileName)
	decisionlog.NewWriter(logPath, decisionlog.Options{}).Log(decisionlog.Entry{Layer: "hook", Command: "git push --force", Verdict: "deny"})

	lock := filepath.Join(filepath.Dir(logPath), telemetry.LockName)
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(lock, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, long, long); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		done <- Export(context.Background(), Job{Log: logPath, Once: true, Idle: time.Second, Settings: telemetry.Settings{Interval: time.Second}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the exporter did not leave")
	}
	rc.Mu.Lock()
	defer rc.Mu.Unlock()
	if !slices.Equal(rc.Got, []string{"git push --force"}) {
		t.Errorf("received %q, want the one decision", rc.Got)
	}
}
