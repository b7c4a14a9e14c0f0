package decisionlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/gofrs/flock"
)

// rotate renames the full log away under the lock file: path.N-1 becomes
// path.N, …, path becomes path.1, and the oldest is replaced. It does so
// only while path is still the file the caller found full (same reports
// that): another writer may have rotated it meanwhile, and the caller then
// simply opens the new file.
func (w *Writer) rotate(same func(os.FileInfo) bool, n int64) error {
	lock := flock.New(w.path + ".lock")
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("logging decision: locking %s: %w", lock.Path(), err)
	}
	defer lock.Unlock()
	cur, err := os.Lstat(w.path)
	if err != nil || !same(cur) || cur.Size()+n <= w.max {
		return nil
	}
	files := Files(w.path, w.keep)
	for i := 1; i < len(files); i++ {
		if err := os.Rename(files[i], files[i-1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("logging decision: rotating: %w", err)
		}
	}
	return nil
}
