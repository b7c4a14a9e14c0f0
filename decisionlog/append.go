package decisionlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// writeLine is the one write of a line; tests replace it to fill the disk.
var writeLine = writeOnce

// append writes line to the log, rotating it first when the line would
// take it past the size bound.
func (w *Writer) append(line []byte) error {
	f, err := openLog(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
			return fmt.Errorf("logging decision: %w", err)
		}
		f, err = openLog(w.path)
	}
	if err != nil {
		return fmt.Errorf("logging decision: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("logging decision: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("logging decision: %s is not a regular file", w.path)
	}
	if fi.Size() > 0 && fi.Size()+int64(len(line)) > w.max {
		if f, err = w.rotate(f, fi, int64(len(line))); err != nil {
			return err
		}
	}
	defer f.Close()
	n, err := writeLine(f, line)
	if err == nil && n < len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if err != nil {
		return fmt.Errorf("logging decision to %s: %w", w.path, err)
	}
	return nil
}

// rotate renames the full log away, under the lock file, and returns the
// fresh log open for appending. Another writer may have rotated it since f
// was opened: then f is simply reopened.
func (w *Writer) rotate(f *os.File, fi os.FileInfo, n int64) (*os.File, error) {
	f.Close()
	lock := flock.New(w.path + ".lock")
	if err := lock.Lock(); err != nil {
		return nil, fmt.Errorf("logging decision: locking %s: %w", lock.Path(), err)
	}
	defer lock.Unlock()
	cur, err := os.Lstat(w.path)
	if err == nil && os.SameFile(cur, fi) && cur.Size()+n > w.max {
		files := Files(w.path, w.keep)
		// path.N-1 → path.N, …, path → path.1; the oldest is replaced.
		for i := 1; i < len(files); i++ {
			if err := os.Rename(files[i], files[i-1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("logging decision: rotating: %w", err)
			}
		}
	}
	f, err = openLog(w.path)
	if err != nil {
		return nil, fmt.Errorf("logging decision: %w", err)
	}
	return f, nil
}
