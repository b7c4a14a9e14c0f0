package statefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by ReadRegular and OpenRegular when the path is
// not a regular file (a FIFO, a device such as /dev/zero, a socket, a
// directory), and by ReadDir when it is not a directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by ReadRegular when the file is larger than its
// bound.
var ErrTooLarge = errors.New("larger than allowed")

// Bounds of the files both binaries read: a file past its bound is an
// error, never read whole.
const (
	// MaxConfig bounds config.json, the policy copy and backups (which
	// hold a config): Fuchsia's manifests make a config of ~1 MB.
	MaxConfig = 64 << 20
	// MaxState bounds state.json, pending.json and the other records of
	// the state directory.
	MaxState = 16 << 20
	// MaxManifest bounds one manifest file.
	MaxManifest = 4 << 20
	// MaxSmall bounds files of a few lines: a key, a ticket, a session
	// answer, a git HEAD, a fingerprint.
	MaxSmall = 1 << 20
)

// OpenRegular opens the file at path for reading without blocking (a FIFO
// would otherwise wait for a writer forever) and returns it only when it
// is a regular file: anything else is an error wrapping ErrNotRegular and
// naming path. Symbolic links are followed. A missing file is an error
// wrapping fs.ErrNotExist.
func OpenRegular(path string) (*os.File, error) {
	f, err := openNonblock(path, false)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
}

// ReadRegular reads the regular file at path (see OpenRegular), at most
// max bytes of it: a longer file is an error wrapping ErrTooLarge, read no
// further than max+1 bytes. An empty file yields a non-nil empty slice.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, max)
}

func readBounded(f *os.File, path string, max int64) ([]byte, error) {
	size := int64(512)
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= max {
		size = fi.Size() + 1
	}
	buf := make([]byte, 0, size)
	for {
		if int64(len(buf)) > max {
			return nil, fmt.Errorf("reading %s: %w: more than %d bytes", path, ErrTooLarge, max)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):cap(buf)]
		if int64(len(room)) > max+1-int64(len(buf)) {
			room = room[:max+1-int64(len(buf))]
		}
		n, err := f.Read(room)
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
		}
	}
}

// ReadDir reads the directory at path without blocking: anything but a
// directory (a FIFO, a file) is an error wrapping ErrNotRegular. Its
// entries are sorted by name, as os.ReadDir's.
func ReadDir(path string) ([]fs.DirEntry, error) {
	f, err := openNonblock(path, true)
	if err != nil {
		err = unwrapPath(err)
		if errNotDir(err) {
			err = fmt.Errorf("%w (not a directory)", ErrNotRegular)
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("reading %s: %w (%s, not a directory)", path, ErrNotRegular, kind(fi.Mode()))
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	sortEntries(ents)
	return ents, nil
}

// unwrapPath drops an *fs.PathError's own "op path:" (the caller names the
// path), keeping what it wraps.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// kind names what a file is, for errors.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}
