package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Protected paths inside the scope. Landlock lets the tree write the whole
// checkout, and nothing can take single paths out of a writable
// directory; yet some files of a checkout act later, as the person,
// outside any confinement: git runs .git/hooks and the programs
// .git/config names (core.fsmonitor, core.pager, aliases), agents-setup
// applies the manifests, and agents read their settings. So a line's
// changes to them are undone once it ends: Snapshot before, Restore after.
// What the tree left running may still change them later; what runs
// between the change and its undoing (a git command of the same line)
// sees the change.

// ProtectedInCheckout are the protected paths of a checkout, relative to
// its top: files, and directories protected with all below them.
var ProtectedInCheckout = []string{
	".git/config", ".git/config.worktree", ".git/info/attributes", ".git/hooks/",
	".agents/config/",
	".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/",
	".gemini/settings.json", ".codex/",
}

// maxProtected bounds what Snapshot keeps of one file; a larger file that
// changes is reported and cannot be undone.
const maxProtected = 1 << 20

// settled is how long before a snapshot a file's last change must lie
// for Restore to take an unchanged (device, inode, size, mtime, ctime)
// as unchanged content without reading it again. The kernel stamps ctime
// from a clock that advances in ticks, and nothing but that clock sets
// it: a change after the snapshot to a file last changed more than a tick
// before it gets a later ctime. A file changed just before the snapshot is
// compared by content.
var settled = time.Second

// fileState is one protected path as it was.
type fileState struct {
	mode    fs.FileMode
	content []byte // a file's content, a link's target
	big     bool   // too large to keep: content is nil
	size    int64
	stat    statKey
}

// statKey is what identifies a file's content without reading it, when
// its ctime is settled.
type statKey struct {
	dev, ino     uint64
	mtime, ctime time.Time
}

// Snapshot is the state of the protected paths of some checkouts.
type Snapshot struct {
	paths []string // the protected paths looked at, absolute
	files map[string]fileState
	// before: a file whose ctime is before it is read again by Restore
	// only when its statKey or size changed.
	before time.Time
}

// TakeSnapshot records the protected paths of the checkouts whose tops
// are dirs (and, where .git is a file, of the git directory it names).
func TakeSnapshot(dirs []string) (*Snapshot, error) {
	s := &Snapshot{files: map[string]fileState{}}
	if !clockSettable() {
		// A process that may set the clock may set it back to a file's
		// ctime and change the file under it: it gets no shortcut.
		s.before = time.Now().Add(-settled)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		top, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // no checkout there
		}
		for _, p := range protectedOf(top) {
			if !seen[p] {
				seen[p] = true
				s.paths = append(s.paths, p)
			}
		}
	}
	real := realDirs{}
	for _, p := range s.paths {
		if err := s.record(p, s.files, nil, real); err != nil {
			return nil, fmt.Errorf("recording the protected paths: %w", err)
		}
	}
	return s, nil
}

// protectedOf lists the protected paths of the checkout at top.
func protectedOf(top string) []string {
	var out []string
	for _, r := range ProtectedInCheckout {
		out = append(out, filepath.Join(top, r))
	}
	gitFile := filepath.Join(top, ".git")
	if fi, err := os.Lstat(gitFile); err == nil && !fi.IsDir() {
		out = append(out, gitFile)
		data, _ := os.ReadFile(gitFile)
		if gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(top, gd)
			}
			dirs := []string{gd}
			if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
				cd := strings.TrimSpace(string(c))
				if !filepath.IsAbs(cd) {
					cd = filepath.Join(gd, cd)
				}
				dirs = append(dirs, cd)
			}
			for _, g := range dirs {
				for _, r := range []string{"config", "config.worktree", "info/attributes", "hooks/"} {
					out = append(out, filepath.Join(g, r))
				}
			}
		}
	}
	return out
}

// record adds the state of p, and of all below it when it is a
// directory, to into. A settled regular file whose stat and size are
// those it had in was keeps was's content, unread.
// A path below a link (the tree may replace .git by a link elsewhere) is
// not looked at: it is recorded as missing. real keeps the answers about
// directories for one pass over the paths (most share their directories).
func (s *Snapshot) record(p string, into, was map[string]fileState, real realDirs) error {
	if real.state(filepath.Dir(p)) != dirReal {
		return nil // below a link, or missing
	}
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			// Missing, or below a file: in a linked worktree .git is a
			// file naming the git directory (see protectedOf).
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fileState{mode: fi.Mode(), size: fi.Size()}
		var stated bool
		st.stat, stated = statKeyOf(fi)
		old, known := was[q]
		known = known && stated
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(q)
			if err != nil {
				return err
			}
			st.content = []byte(t)
		case fi.Mode().IsRegular() && fi.Size() > maxProtected:
			st.big = true
		case fi.Mode().IsRegular() && known && old.mode == st.mode && old.size == st.size && !old.big &&
			old.stat == st.stat && st.stat.ctime.Before(s.before):
			st.content = old.content
		case fi.Mode().IsRegular():
			if st.content, err = readFile(q, fi.Size()); err != nil {
				return err
			}
		}
		into[q] = st
		return nil
	})
}

// Restore undoes the changes made since the snapshot to its protected
// paths, but those keep accepts (a change a person approved), and
// returns the paths it found changed, sorted; the error says which could
// not be undone.
func (s *Snapshot) Restore(keep func(path string) bool) ([]string, error) {
	now := map[string]fileState{}
	var errs []error
	real := realDirs{}
	for _, p := range s.paths {
		if err := s.record(p, now, s.files, real); err != nil {
			errs = append(errs, err)
		}
	}
	var changed []string
	for p, was := range s.files {
		if is, ok := now[p]; !ok || !same(was, is) {
			changed = append(changed, p)
		}
	}
	for p := range now {
		if _, ok := s.files[p]; !ok {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	var undone []string
	// Deepest first removes what was added below before what was added
	// above; shallowest first puts back directories before their files.
	for i := len(changed) - 1; i >= 0; i-- {
		p := changed[i]
		if keep != nil && keep(p) {
			continue
		}
		undone = append(undone, p)
		if _, ok := s.files[p]; !ok && realDir(filepath.Dir(p)) {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
			}
		}
	}
	for _, p := range changed {
		was, ok := s.files[p]
		if !ok || keep != nil && keep(p) {
			continue
		}
		if err := put(p, was); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", p, err))
		}
	}
	sort.Strings(undone)
	return undone, errors.Join(errs...)
}

// realDirs answers whether directories are where their names say, no
// link on the way, and whether they exist, keeping the answers: one Lstat
// per directory of a pass, where EvalSymlinks takes one per component of
// every path, and none below a missing one.
type realDirs map[string]dirState

type dirState int8

const (
	dirLinked  dirState = iota // a link on the way (or not a directory above)
	dirReal                    // there, no link on the way
	dirMissing                 // not there, below a real directory
)

// realDir reports whether the directory d is where its name says, no link
// on the way (missing counts, below a real directory).
func realDir(d string) bool {
	return realDirs{}.check(d)
}

// check is realDir, its answers kept in r.
func (r realDirs) check(d string) bool {
	return r.state(d) != dirLinked
}

// state says what d is, its answer kept in r.
func (r realDirs) state(d string) dirState {
	if v, ok := r[d]; ok {
		return v
	}
	parent := filepath.Dir(d)
	v := dirReal
	if parent != d {
		switch v = r.state(parent); v {
		case dirReal:
			fi, err := os.Lstat(d)
			switch {
			case err == nil && fi.Mode()&fs.ModeSymlink == 0:
			case errors.Is(err, fs.ErrNotExist):
				v = dirMissing
			default:
				v = dirLinked
			}
		case dirMissing: // nothing below a missing directory
		}
	}
	r[d] = v
	return v
}

func same(a, b fileState) bool {
	if a.mode.IsDir() || b.mode.IsDir() {
		return a.mode == b.mode
	}
	return a.mode == b.mode && a.big == b.big && a.size == b.size && bytes.Equal(a.content, b.content)
}

// put makes p what was says, replacing whatever is there.
func put(p string, was fileState) error {
	if was.big {
		return errors.New("too large to have been kept")
	}
	if !realDir(filepath.Dir(p)) {
		return fmt.Errorf("%s is now a link or holds one", filepath.Dir(p))
	}
	if fi, err := os.Lstat(p); err == nil && (was.mode.IsDir() != fi.IsDir() || !was.mode.IsDir()) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	switch {
	case was.mode.IsDir():
		if err := os.MkdirAll(p, was.mode.Perm()); err != nil {
			return err
		}
		return os.Chmod(p, was.mode.Perm())
	case was.mode&fs.ModeSymlink != 0:
		return os.Symlink(string(was.content), p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, was.mode.Perm())
	if err != nil {
		return err
	}
	if _, err := f.Write(was.content); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(p, was.mode.Perm())
}
