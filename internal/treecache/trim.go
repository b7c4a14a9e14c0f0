package treecache

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// TrimEvery is how often the tree's caches are measured.
const TrimEvery = 24 * time.Hour

// maxEntries bounds a measurement: a cache of more files than this counts
// as over any bound (a tree may make millions of empty files).
const maxEntries = 4 << 20

// maxDepth bounds how deep a measurement or a removal goes: each level
// holds a descriptor.
const maxDepth = 256

// Trimmed is what a trim found and did.
type Trimmed struct {
	// Size is the caches' size before, in bytes (at least: a measurement
	// stops at maxEntries); Removed the top directories removed.
	Size    int64
	Removed []string
}

// TrimDaily trims the caches to bound (Trim) when stamp, a file the tree cannot
// write (in agent-shim's state directory), is missing or older than
// TrimEvery, and sets its time to now first, so that lines running
// together measure once. done is false when it was not due, and when the
// stamp cannot be written (a line under the layer that runs agent-shim:
// the outer line's trims).
func (c *Cache) TrimDaily(stamp string, bound int64, now time.Time) (t Trimmed, done bool, err error) {
	fi, err := os.Lstat(stamp)
	switch {
	case err == nil && now.Sub(fi.ModTime()) < TrimEvery && fi.ModTime().Before(now.Add(time.Minute)):
		return Trimmed{}, false, nil
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(stamp), 0o700); err != nil {
			return Trimmed{}, false, nil
		}
		f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return Trimmed{}, false, nil // another line made it just now, or it cannot be
		}
		f.Close()
	case err != nil:
		return Trimmed{}, false, nil
	case !fi.Mode().IsRegular():
		return Trimmed{}, false, fmt.Errorf("%s is not a regular file", stamp)
	}
	if err := os.Chtimes(stamp, now, now); err != nil {
		return Trimmed{}, false, nil
	}
	t, err = c.Trim(bound)
	return t, true, err
}

// Trim keeps the tree's caches under bound bytes: it measures each of
// Root's top entries (one per tool) and, when their total is over bound,
// removes the largest until the total is at most three quarters of it.
// It never follows a link, and works through descriptors opened below
// Root (a process of an earlier line that swaps a directory for a link
// while it runs does not lead it out); read-only directories (Go's module
// cache) are made writable to be emptied.
func (c *Cache) Trim(bound int64) (Trimmed, error) {
	root, err := unix.Open(c.Root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Trimmed{}, fmt.Errorf("opening %s: %w", c.Root, err)
	}
	defer unix.Close(root)
	names, err := readNames(root)
	if err != nil {
		return Trimmed{}, fmt.Errorf("reading %s: %w", c.Root, err)
	}
	type entry struct {
		name string
		size int64
	}
	var entries []entry
	var t Trimmed
	budget := maxEntries
	for _, n := range names {
		s := sizeAt(root, n, &budget, 0)
		entries = append(entries, entry{n, s})
		t.Size += s
	}
	if budget <= 0 {
		t.Size = max(t.Size, bound+1)
	}
	if t.Size <= bound {
		return t, nil
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(b.size, a.size) })
	left := t.Size
	var errs []error
	for _, e := range entries {
		if left <= bound/4*3 && budget > 0 {
			break
		}
		if err := removeAt(root, e.name, 0); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", filepath.Join(c.Root, e.name), err))
			continue
		}
		t.Removed = append(t.Removed, filepath.Join(c.Root, e.name))
		left -= e.size
	}
	return t, errors.Join(errs...)
}

// readNames reads every name of the directory fd.
func readNames(fd int) ([]string, error) {
	// Close-on-exec: a process that runs the layer holds no descriptor
	// that is not (see supervisor/inherited).
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	var out []string
	for {
		names, err := f.Readdirnames(1024)
		out = append(out, names...)
		if err == io.EOF || len(names) == 0 {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// sizeAt is the space name (in the directory dirfd) takes, with all below
// it; links are not followed. budget counts the entries a measurement may
// still look at.
func sizeAt(dirfd int, name string, budget *int, depth int) int64 {
	*budget--
	if *budget < 0 {
		return 0
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0
	}
	size := st.Blocks * 512
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || depth >= maxDepth {
		return size
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return size
	}
	defer unix.Close(fd)
	names, _ := readNames(fd)
	for _, n := range names {
		size += sizeAt(fd, n, budget, depth+1)
	}
	return size
}

// removeAt removes name from the directory dirfd, and all below it,
// without following a link.
func removeAt(dirfd int, name string, depth int) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if depth >= maxDepth {
		return fmt.Errorf("more than %d directories deep", maxDepth)
	}
	fd, oerr := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if oerr != nil {
		if errors.Is(oerr, unix.ENOENT) {
			return nil
		}
		return err // not a directory: unlinkat's error says why
	}
	// Go's module cache makes its directories read-only.
	unix.Fchmod(fd, 0o700)
	names, rerr := readNames(fd)
	var errs []error
	if rerr != nil {
		errs = append(errs, rerr)
	}
	for _, n := range names {
		if err := removeAt(fd, n, depth+1); err != nil {
			errs = append(errs, err)
			break
		}
	}
	unix.Close(fd)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}
