package decisionlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// rotationWait bounds the wait for the rotation lock, rotationFresh how
// long after a rotator took it a writer still waits at all. A rotation
// holds it for a few renames (tens of microseconds); a hook call costs
// about half a millisecond in process and a few milliseconds as a process.
const (
	rotationWait  = 20 * time.Millisecond
	rotationFresh = time.Second
)

// errRotationHeld: another process holds the rotation lock. A writer does
// not wait for it beyond rotationWait: anyone who can read the lock file
// can hold it (flock needs no write access), a process a line left behind
// included, and the log is written on the decision's path.
var errRotationHeld = errors.New("the rotation lock is held by another process")

// rotate renames the full log away under the lock file: path.N-1 becomes
// path.N, …, path becomes path.1, and the oldest is replaced. It does so
// only while path is still the file the caller found full (same reports
// that): another writer may have rotated it meanwhile, and the caller then
// simply opens the new file.
//
// When another process holds the lock, rotate returns errRotationHeld, and
// the caller appends to the full file (see ceiling). It waits for the lock
// first, at most rotationWait, only while the holder is rotating: a
// rotator sets the lock file's time when it takes the lock, and a holder
// that took it more than rotationFresh ago is not rotating. A process a
// line left behind that holds the lock cannot set that time (the
// run-time layer refuses utimes outside the writable directories), so it
// costs each line one failed flock, and the first lines within
// rotationFresh of a rotation rotationWait.
func (w *Writer) rotate(same func(os.FileInfo) bool, n int64) error {
	path := w.path + ".lock"
	lock := flock.New(path, flock.SetFlag(os.O_RDONLY|os.O_CREATE|noWait), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	if err == nil && !ok && rotating(path) {
		ctx, cancel := context.WithTimeout(context.Background(), rotationWait)
		ok, err = lock.TryLockContext(ctx, time.Millisecond)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			ok, err = false, nil
		}
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	if !ok {
		return errRotationHeld
	}
	defer lock.Unlock()
	now := time.Now()
	os.Chtimes(path, now, now)
	cur, err := os.Lstat(w.path)
	if err != nil || !same(cur) || cur.Size()+n <= w.max {
		return nil
	}
	files := Files(w.path, w.keep)
	for i := 1; i < len(files); i++ {
		if err := os.Rename(files[i], files[i-1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotating: %w", err)
		}
	}
	return nil
}

// rotating reports whether the lock file at path was taken by a rotator
// within rotationFresh.
func rotating(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	age := time.Since(fi.ModTime())
	return age > -rotationFresh && age < rotationFresh
}

// ceiling is the size a log that cannot be rotated (its lock held, a
// rename refused) may grow to: lines go on into it up to twice MaxSize,
// and past that they are lost and counted (see countLost). A log whose
// lock is held for good thus keeps MaxSize more of the record, and the
// disk stays bounded.
func (w *Writer) ceiling() int64 { return 2 * w.max }
