package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// The export's lock keeps to one exporter per log. Any process that can
// read the lock file can hold it, though (flock needs no write access), a
// process a line left behind included, and the export would then stop for
// as long as that process lives. So the exporter also renews a lease: it
// sets the lock file's time when it starts and every leaseBeat. An
// exporter that finds the lock held by a holder that has not renewed it
// for leaseStale takes the export over without the lock, and renews in its
// turn. A process of the tree cannot set that time under the run-time
// layer (utimes outside the writable directories is refused), so a lock
// held for good costs at most leaseStale of export, never the export.
//
// Two exporters that take over at once both send: a record may then
// arrive twice, as after an exporter that died before saving its position,
// and none is skipped, since each saves only the position past what it
// sent.
var (
	leaseBeat  = 5 * time.Second
	leaseStale = 30 * time.Second
)

// Lease is an exporter's hold on the export of one log.
type Lease struct {
	path   string
	lock   *flock.Flock // nil when taken over from a holder that does not renew
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// Acquire takes the export of the log at logPath for this process, and
// renews it until Release. It returns nil and no error when another
// exporter is at work (it holds the lock and renewed it within
// leaseStale). It never waits.
func Acquire(logPath string) (*Lease, error) {
	path := stateFile(logPath, LockName)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("locking the export: %w", err)
	}
	lock := flock.New(path, flock.SetFlag(os.O_RDONLY|os.O_CREATE|noWait), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking the export: %w", err)
	}
	l := &Lease{path: path, stop: make(chan struct{}), done: make(chan struct{})}
	if ok {
		l.lock = lock
	} else if renewed(path) {
		return nil, nil
	}
	if err := l.renew(time.Now()); err != nil {
		if l.lock != nil {
			l.lock.Unlock()
		}
		return nil, fmt.Errorf("locking the export: %w", err)
	}
	go l.beat()
	return l, nil
}

// TookOver reports whether the lease was taken from a holder of the lock
// that did not renew it: another process holds the lock.
func (l *Lease) TookOver() bool { return l.lock == nil }

// Release ends the lease. It sets the lock file's time back to the epoch
// first, so that the next exporter need not wait leaseStale when a
// process that does not renew holds the lock now.
func (l *Lease) Release() {
	if l.closed {
		return
	}
	l.closed = true
	close(l.stop)
	<-l.done
	l.renew(time.Unix(0, 0))
	if l.lock != nil {
		l.lock.Unlock()
	}
}

// renew sets the lock file's time to t.
func (l *Lease) renew(t time.Time) error { return os.Chtimes(l.path, t, t) }

// beat renews the lease every leaseBeat until Release.
func (l *Lease) beat() {
	defer close(l.done)
	tick := time.NewTicker(leaseBeat)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-tick.C:
			l.renew(now)
		}
	}
}

// renewed reports whether the lock file at path was renewed within
// leaseStale (a time further ahead than that is a clock set back: not
// renewed).
func renewed(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	age := time.Since(fi.ModTime())
	return age < leaseStale && age > -leaseStale
}
