//go:build unix

package statefile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/internal/locktest"
)

func TestMain(m *testing.M) {
	locktest.Main()
	os.Exit(m.Run())
}

// Another process holds the lock (opened read-only: any reader of the
// lock file can): Lock gives up at its deadline, TryLock at once.
func TestLockHeldByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	release := locktest.Hold(t, LockPath(path))
	var err error
	took := locktest.Within(t, 5*time.Second, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err = Lock(ctx, path)
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock while another process holds it: %v", err)
	}
	if took > time.Second {
		t.Errorf("Lock with a 20ms deadline took %v", took)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLock while another process holds it: %v", err)
	}
	release()
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("Lock once released: %v", err)
	}
	unlock()
}

// The lock file is opened without waiting on a FIFO planted in its place
// and never through a link: a link would make a lock of another file (or
// create one where the link points), a FIFO would hang the open.
func TestLockFilePlanted(t *testing.T) {
	dir := t.TempDir()
	t.Run("fifo", func(t *testing.T) {
		path := filepath.Join(dir, "a.json")
		if err := syscall.Mkfifo(LockPath(path), 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		locktest.Within(t, 5*time.Second, func() {
			var unlock func() error
			if unlock, err = Lock(context.Background(), path); err == nil {
				unlock()
			}
		})
		// flock on a FIFO may work or not; what matters is that it
		// returned.
		t.Logf("lock of a FIFO: %v", err)
	})
	t.Run("link", func(t *testing.T) {
		path := filepath.Join(dir, "b.json")
		target := filepath.Join(dir, "elsewhere")
		if err := os.Symlink(target, LockPath(path)); err != nil {
			t.Fatal(err)
		}
		if unlock, err := Lock(context.Background(), path); err == nil {
			unlock()
			t.Error("locked through a link")
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the link's target was created: %v", err)
		}
		if unlock, err := TryLock(path); err == nil {
			unlock()
			t.Error("TryLock through a link")
		}
	})
	t.Run("new", func(t *testing.T) {
		path := filepath.Join(dir, "c.json")
		unlock, err := Lock(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		fi, err := os.Stat(LockPath(path))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("a new lock file has mode %v, want 0600", fi.Mode().Perm())
		}
	})
}
