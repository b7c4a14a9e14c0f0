// Package statefile reads and writes the files agent-shim and agents-setup
// keep: a lock beside a config file, atomic writes (and the temporary
// files and renames a journal of package setup builds on), reads that
// refuse links, devices and oversized files, and the XDG directories.
// agents-setup's state.json and backups are internal/setupstate's.
package statefile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Digest identifies a grant in state.json: the first 128 bits of its
// SHA-256, in hex.
func Digest(grant string) string {
	sum := sha256.Sum256([]byte(grant))
	return hex.EncodeToString(sum[:16])
}

// Grants are grants (or their digests) per list, as in config.json's
// userSettings.globalPermissionGrants. It converts to and from
// Grants; this package does not import config so that config can
// lock and write through it.
type Grants struct {
	Allow []string `json:"allow"`
	Ask   []string `json:"ask"`
	Deny  []string `json:"deny"`
}

// LockPath returns the sidecar lock file of a config file.
func LockPath(configPath string) string { return configPath + ".lock" }

// LockWait bounds how long Lock waits when ctx has no deadline of its own:
// no lock in this project waits forever.
const LockWait = 2 * time.Minute

// Lock takes the lock of the file at path (a sidecar, LockPath(path)),
// waiting for it until ctx is done, and at most LockWait when ctx has no
// deadline. The returned func releases it.
func Lock(ctx context.Context, path string) (unlock func() error, err error) {
	fl, err := newFlock(path)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, LockWait)
		defer cancel()
	}
	ok, err := fl.TryLockContext(ctx, 5*time.Millisecond)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		fl.Close()
		return nil, fmt.Errorf("locking %s: %w", fl.Path(), err)
	}
	return fl.Unlock, nil
}

// TryLock takes the lock of the config file at path if it is free, and
// fails with ErrLocked otherwise.
func TryLock(path string) (unlock func() error, err error) {
	fl, err := newFlock(path)
	if err != nil {
		return nil, err
	}
	ok, err := fl.TryLock()
	if err == nil && !ok {
		err = ErrLocked
	}
	if err != nil {
		fl.Close()
		return nil, fmt.Errorf("locking %s: %w", fl.Path(), err)
	}
	return fl.Unlock, nil
}

// newFlock is the lock of path. The lock file is opened read-only (flock
// needs no write access), never waiting on a FIFO and never through a
// link (NoWait), owner-only when it is created.
func newFlock(path string) (*flock.Flock, error) {
	lock := LockPath(path)
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		return nil, fmt.Errorf("locking %s: %w", lock, err)
	}
	return flock.New(lock, flock.SetFlag(os.O_CREATE|os.O_RDONLY|NoWait), flock.SetPermissions(0o600)), nil
}

// WriteJSON writes v as indented JSON with a trailing newline, atomically
// (see WriteAtomic), creating the directory if needed.
func WriteJSON(path string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return WriteAtomic(path, append(data, '\n'), perm)
}

// WriteAtomic replaces the file at path with data: it writes a temporary
// file in the same directory, syncs it, renames it over path and syncs the
// directory, so a crash leaves the old or the new content. No temporary
// file is left behind on any error; the name of one left by a killed
// process holds its pid, for RemoveStale. An existing file keeps its mode.
//
// A symbolic link at path is followed and its target replaced, so a config
// kept in a dotfiles repository stays a link; a dangling link creates its
// target. A directory at path (or as a link's target) is an error.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, target, err := WriteTemp(path, data, perm)
	if err != nil {
		return err
	}
	return Commit(tmp, target)
}

// WriteTemp is the first half of WriteAtomic: it writes data, synced, to
// a temporary file beside the file path resolves to (see Target), and
// returns the temporary file and that target. Commit renames it into
// place; os.Remove discards it.
//
// Before it writes, it removes the temporary files of target whose
// writer is dead (see SweepDead): every atomic writer's leftovers go at
// the next write of the same file.
func WriteTemp(path string, data []byte, perm os.FileMode) (tmpName, target string, err error) {
	return writeTemp(path, TempPrefix, data, perm)
}

// WriteTxnTemp is WriteTemp for a temporary file that a journal names
// (package setup's transactions): its name, TxnPrefix, is one that
// WriteTemp's sweep and RemoveStale leave alone, so that only the owner of
// the journal decides what became of it (RemoveStaleTxn).
func WriteTxnTemp(path string, data []byte, perm os.FileMode) (tmpName, target string, err error) {
	return writeTemp(path, TxnPrefix, data, perm)
}

func writeTemp(path string, prefix func(string) string, data []byte, perm os.FileMode) (tmpName, target string, err error) {
	target, err = Target(path)
	if err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	if fi, err := os.Stat(target); err == nil {
		perm = fi.Mode().Perm()
	}
	SweepDead(target)
	tmp, err := os.CreateTemp(filepath.Dir(target), prefix(target)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", path, err)
	}
	return tmp.Name(), target, nil
}

// errUnsynced is wrapped by Commit (and WriteAtomic) when the rename
// was done but syncing the directory failed: the new content is in
// place, and may not survive a crash of the system.
var errUnsynced = errors.New("written, but not synced")

// Commit renames a temporary file of WriteTemp over target and syncs the
// directory. When the rename fails the temporary file is removed; when
// only the sync fails the error wraps errUnsynced: the rename is the
// commit, and it was done.
func Commit(tmpName, target string) error {
	if err := os.Rename(tmpName, target); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("writing %s: %w", target, err)
	}
	if err := SyncDir(filepath.Dir(target)); err != nil {
		return fmt.Errorf("writing %s: %w: %w", target, errUnsynced, err)
	}
	return nil
}

// TempPrefix is the name prefix of the temporary files WriteTemp makes
// for path: ".<name>.tmp-", then the pid and a random suffix.
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// TxnPrefix is the name prefix of the temporary files WriteTxnTemp makes
// for path: ".<name>.txn-", then the pid and a random suffix.
func TxnPrefix(path string) string { return "." + filepath.Base(path) + ".txn-" }

// maxLinks bounds the symbolic links Target follows, as the kernel does.
const maxLinks = 40

// Target returns the file a write to path replaces: path itself, or the
// end of the chain of symbolic links at path (which need not exist: a
// dangling link is written through). A directory is an error.
func Target(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(path), link)
			}
			path = link
			continue
		case fi.IsDir():
			return "", fmt.Errorf("%s is a directory", path)
		}
		return path, nil
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// staleAge is how old a temporary file must be before RemoveStale takes
// it for abandoned even though a process with its pid is alive (the pid
// was reused) or it names no pid.
const staleAge = time.Hour

// RemoveStale removes the temporary files WriteTemp made for path (found
// through its links, see Target) that their process left behind: those
// whose process is gone, and any older than staleAge. Call it holding
// the lock that guards path's writers. It returns the files removed.
func RemoveStale(path string) ([]string, error) {
	target, err := Target(path)
	if err != nil {
		return nil, err
	}
	return removeStale(filepath.Dir(target), TempPrefix(target))
}

// RemoveStaleTxn is RemoveStale for the temporary files of WriteTxnTemp:
// call it once the journal that may name one was dealt with.
func RemoveStaleTxn(path string) ([]string, error) {
	target, err := Target(path)
	if err != nil {
		return nil, err
	}
	return removeStale(filepath.Dir(target), TxnPrefix(target))
}

// RemoveStaleIn is RemoveStale for every file of dir: it removes the
// temporary files WriteTemp made there for any file.
func RemoveStaleIn(dir string) ([]string, error) { return removeStale(dir, "") }

// SweepDead removes the temporary files WriteTemp made for target (a
// path Target resolved) whose writer is dead, without a lock: a file
// whose name holds a dead pid has no writer left, and a live writer's
// file is never taken (unlike RemoveStale, age alone does not count). It
// reports nothing and fails silently: it is housekeeping.
func SweepDead(target string) {
	removeDead(filepath.Dir(target), TempPrefix(target), false)
}

func removeStale(dir, prefix string) ([]string, error) {
	return removeDead(dir, prefix, true)
}

func removeDead(dir, prefix string, byAge bool) ([]string, error) {
	entries, err := ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("removing stale temporary files: %w", err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, ".") {
			continue
		}
		var rest string
		if prefix != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(name, prefix); !ok {
				continue
			}
		} else {
			i := strings.LastIndex(name, ".tmp-")
			if i < 0 {
				continue
			}
			rest = name[i+len(".tmp-"):]
		}
		pid := 0
		if i := strings.IndexByte(rest, '-'); i > 0 {
			pid, _ = strconv.Atoi(rest[:i])
		}
		if pid == os.Getpid() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone already
		}
		if pid == 0 || alive(pid) {
			if !byAge || time.Since(info.ModTime()) < staleAge {
				continue
			}
		}
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("removing stale temporary file: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// SyncDir syncs the directory dir, so that a rename in it survives a
// crash of the system.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
