//go:build unix

package telemetry

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// strangerHolds has a process that is not an exporter (one a line left
// behind) hold the export's lock: a descriptor of its own, opened
// read-only (flock needs no write access), on a lock file whose time is
// mtime. flock locks belong to the open file description, so this
// process's own TryLock on another descriptor finds it held, as another
// process's would.
func strangerHolds(t *testing.T, logPath string, mtime time.Time) {
	t.Helper()
	path := stateFile(logPath, LockName)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// acquireWithin is Acquire, failing the test rather than hanging it when
// it waits.
func acquireWithin(t *testing.T, logPath string) *Lease {
	t.Helper()
	type result struct {
		l   *Lease
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := Acquire(logPath)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.l != nil {
			t.Cleanup(r.l.Release)
		}
		return r.l
	case <-time.After(5 * time.Second):
		t.Fatal("Acquire waited for the lock")
		return nil
	}
}

func mtimeOf(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// TestLeaseFree: the first exporter holds the lock; a second leaves while
// the first renews; once the first is done the next holds the lock again.
func TestLeaseFree(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "state", "decisions.jsonl")
	l := acquireWithin(t, logPath)
	if l == nil || l.TookOver() {
		t.Fatalf("Acquire on a free lock = %+v, want the lock held", l)
	}
	if l2 := acquireWithin(t, logPath); l2 != nil {
		t.Fatal("a second exporter got the export while the first runs")
	}
	l.Release()
	if l3 := acquireWithin(t, logPath); l3 == nil || l3.TookOver() {
		t.Fatalf("after Release: %+v, want the lock held", l3)
	}
}

// TestLeaseStrangerHolds: a process that is not an exporter holds the
// export's lock. Before, every exporter left at once, thinking another at
// work: the export stopped for as long as the holder lived. Now one that
// finds the lock not renewed within leaseStale takes the export over, and
// while it renews, others leave; its Release lets the next take over at
// once.
func TestLeaseStrangerHolds(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "state", "decisions.jsonl")
	strangerHolds(t, logPath, time.Now().Add(-time.Hour))
	l := acquireWithin(t, logPath)
	if l == nil || !l.TookOver() {
		t.Fatalf("Acquire under a stranger's stale lock = %+v, want the export taken over", l)
	}
	if l2 := acquireWithin(t, logPath); l2 != nil {
		t.Fatal("a second exporter took over from one that renews")
	}
	l.Release()
	if l3 := acquireWithin(t, logPath); l3 == nil || !l3.TookOver() {
		t.Fatalf("after Release: %+v, want the export taken over again at once", l3)
	}
}

// TestLeaseStrangerFresh: a holder that renewed within leaseStale is taken
// for an exporter at work (a round is lost, at most leaseStale of them).
func TestLeaseStrangerFresh(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "state", "decisions.jsonl")
	strangerHolds(t, logPath, time.Now())
	if l := acquireWithin(t, logPath); l != nil {
		t.Fatal("took the export over from a holder that renewed just now")
	}
}

// TestLeaseRenews: a lease renews the lock file's time every leaseBeat.
func TestLeaseRenews(t *testing.T) {
	old := leaseBeat
	leaseBeat = 10 * time.Millisecond
	t.Cleanup(func() { leaseBeat = old })
	for _, stranger := range []bool{false, true} {
		logPath := filepath.Join(t.TempDir(), "state", "decisions.jsonl")
		if stranger {
			strangerHolds(t, logPath, time.Now().Add(-time.Hour))
		}
		l := acquireWithin(t, logPath)
		if l == nil {
			t.Fatal("no lease")
		}
		path := stateFile(logPath, LockName)
		long := time.Now().Add(-time.Hour)
		if err := os.Chtimes(path, long, long); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for mtimeOf(t, path).Before(time.Now().Add(-time.Minute)) {
			if time.Now().After(deadline) {
				t.Fatalf("stranger=%v: the lease was not renewed", stranger)
			}
			time.Sleep(5 * time.Millisecond)
		}
		l.Release()
		if got := mtimeOf(t, path); !got.Equal(time.Unix(0, 0)) {
			t.Errorf("stranger=%v: after Release the lock's time is %v, want the epoch", stranger, got)
		}
	}
}
