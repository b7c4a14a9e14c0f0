//go:build unix

package decisionlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeLine is the one write of a line; tests replace it to fill the disk.
var writeLine = writeOnce

// noWait opens the rotation lock and the count of lost lines without
// waiting (on a FIFO in their place) and never through a link.
const noWait = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// append writes line to the log with raw system calls (open, fstat,
// write, close: a hook call pays for each), rotating the log first when
// the line would take it past the size bound.
//
// The log is opened with O_APPEND, owner-only, never through a link (it is
// a protected path: a link planted there would send lines elsewhere), and
// never waiting on a FIFO.
func (w *Writer) append(line []byte) error {
	fd, st, err := w.open()
	if err != nil {
		return err
	}
	if st.Size > 0 && st.Size+int64(len(line)) > w.max {
		syscall.Close(fd)
		same := func(fi os.FileInfo) bool {
			s, ok := fi.Sys().(*syscall.Stat_t)
			return ok && uint64(s.Dev) == uint64(st.Dev) && uint64(s.Ino) == uint64(st.Ino)
		}
		rerr := w.rotate(same, int64(len(line)))
		if fd, st, err = w.open(); err != nil {
			return err
		}
		// Not rotated (the lock held, a rename refused): the line goes
		// into the full file, up to the ceiling.
		if rerr != nil && st.Size > 0 && st.Size+int64(len(line)) > w.ceiling() {
			syscall.Close(fd)
			return fmt.Errorf("logging decision to %s: the log is at twice its size bound and cannot be rotated: %w", w.path, rerr)
		}
	}
	n, err := writeLine(fd, line)
	cerr := syscall.Close(fd)
	if err == nil && n < len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("logging decision to %s: %w", w.path, err)
	}
	return nil
}

// open opens the log for appending, creating it (and its directory) when
// missing, and returns it with its status; it must be a regular file.
func (w *Writer) open() (int, syscall.Stat_t, error) {
	// O_CREAT only when the file is missing: an open with O_CREAT takes
	// the directory's lock, which every agent's shim would contend for.
	const flags = syscall.O_WRONLY | syscall.O_APPEND | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	openFlags := func(f int) (int, error) {
		for {
			fd, err := syscall.Open(w.path, f, 0o600)
			if err != syscall.EINTR {
				return fd, err
			}
		}
	}
	open := func() (int, error) {
		fd, err := openFlags(flags)
		if err == syscall.ENOENT {
			fd, err = openFlags(flags | syscall.O_CREAT)
		}
		return fd, err
	}
	fd, err := open()
	if err == syscall.ENOENT {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
			return -1, syscall.Stat_t{}, fmt.Errorf("logging decision: %w", err)
		}
		fd, err = open()
	}
	if err != nil {
		return -1, syscall.Stat_t{}, fmt.Errorf("logging decision: opening %s: %w", w.path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, st, fmt.Errorf("logging decision: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return -1, st, fmt.Errorf("logging decision: %s is not a regular file", w.path)
	}
	return fd, st, nil
}

// lostPending reports, with one lstat, whether lines lost before are
// waiting to be counted.
func lostPending(path string) bool {
	var st syscall.Stat_t
	return syscall.Lstat(path, &st) == nil
}

// writeOnce is exactly one write(2): os.File.Write would write the rest of
// a short write with a second call, which another agent's line could come
// between.
func writeOnce(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Write(fd, b)
		if !errors.Is(err, syscall.EINTR) {
			return max(n, 0), err
		}
	}
}
