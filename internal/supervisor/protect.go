//go:build unix

package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Protected paths inside the scope. Landlock lets the tree write the whole
// checkout, and nothing can take single paths out of a writable
// directory; yet some files of a checkout act later, as the person,
// outside any confinement: git runs the hooks and the programs its config
// names (core.fsmonitor, core.pager, aliases), agents-setup applies the
// manifests, and agents read their settings. Where the kernel allows it,
// the tree gets them read-only (Config.Protect: a mount namespace of its
// own); either way a line's changes to them are undone once it ends:
// Snapshot before, Restore after.
//
// A snapshot finds every repository of a checkout (the checkout's own, a
// linked worktree's git directory and its common directory, submodules'
// git directories under .git/modules, linked worktrees' administrative
// directories, nested repositories such as jiri's or repo's projects,
// down to maxWalk directories) and, of each, every path git reads code
// to run from: config, config.worktree, commondir, info/attributes, the
// files config includes, the hooks directory and the one core.hooksPath
// names (husky's .husky); and of the checkout, the manifests of it and of
// every overlay (vendor/*/.agents/config) and the agents' settings.
//
// Restore works through descriptors opened at the snapshot, never by
// walking a path again: a directory the tree moved or replaced with a
// link is found where the descriptor is, and nothing is written through a
// link. What it cannot undo (a file made immutable, a directory made
// unreadable to root) it puts aside, renamed, so that it is not live;
// what it can neither undo nor put aside it reports as live
// (UndoError.Live), for the caller to refuse what would run it.

// ProtectedInCheckout are the protected paths of a checkout that are not
// git's, relative to its top: files, and directories protected with all
// below them.
var ProtectedInCheckout = []string{
	".agents/config/",
	".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/",
	".gemini/settings.json", ".codex/",
}

// protectedInGitDir are the protected paths of a git directory: what git
// reads code to run from.
var protectedInGitDir = []string{"config", "config.worktree", "commondir", "info/attributes", "hooks/"}

// maxProtected bounds what Snapshot keeps of one file; a larger file that
// changes is reported and cannot be undone.
const maxProtected = 1 << 20

// maxWalk bounds the directories a snapshot looks at for nested
// repositories and overlays, per checkout; maxDepth, how deep.
const (
	maxWalk  = 1500
	maxDepth = 8
)

// notWalked are directories a snapshot does not look into for nested
// repositories: packages, environments and build output, large and
// made by tools.
var notWalked = map[string]bool{"node_modules": true, ".venv": true, "venv": true, "__pycache__": true, ".tox": true,
	".mypy_cache": true, ".pytest_cache": true, ".next": true, ".gradle": true, "target": true, ".cache": true}

// settled is how long before a snapshot a file's last change must lie
// for Restore to take an unchanged (device, inode, size, mtime, ctime)
// as unchanged content without reading it again. The kernel stamps ctime
// from a clock that advances in ticks, and nothing but that clock sets
// it: a change after the snapshot to a file last changed more than a tick
// before it gets a later ctime. A file changed just before the snapshot is
// compared by content.
var settled = time.Second

// fileState is one protected file or directory as it was.
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

// dirRef is a directory opened at the snapshot: restoring goes through
// it, wherever the directory is by then.
type dirRef struct {
	fd     int
	path   string // its name at the snapshot
	parent *dirRef
	name   string // its name in parent
	id     FileID
}

// entry is one protected path.
type entry struct {
	path string   // absolute, as named at the snapshot
	at   *dirRef  // the deepest directory of its path there at the snapshot
	rest []string // the names below at, the entry's own last
	tree bool     // a directory protected with all below it
	was  map[string]fileState
	// "" is the entry itself; a tree's files and directories below it by
	// their path relative to it. Empty: it was not there.
}

// Snapshot is the state of the protected paths of some checkouts.
type Snapshot struct {
	entries []*entry
	dirs    map[string]*dirRef
	// overlays are the vendor directories of the checkouts, and the
	// overlays with a configuration directory in each at the snapshot: a
	// new one is a plant.
	overlays []overlayDirs
	// before: a file whose ctime is before it is read again by Restore
	// only when its statKey or size changed.
	before time.Time
	// watched are the directories whose own directories (those of the
	// snapshot below them) are put back when moved or replaced: the
	// checkouts' tops, the git directories outside them.
	watched []string
	// readOnly are the protected paths the tree had read-only for the
	// whole line, and anchored the directories it could not move
	// (Run's binds, as the tree's namespace showed them): a change there
	// is not the line's, and the undo leaves it alone.
	readOnly, anchored map[string]bool
	// Partial names the checkouts whose nested repositories were not all
	// looked at (past maxWalk directories).
	Partial []string
	closed  bool
}

type overlayDirs struct {
	top  *dirRef
	had  map[string]bool
	path string
}

// Guarded is a directory the tree may write but for the paths below it
// that act later as the person (Paths, relative; one ending in "/" with
// all below it): under agent-shim run, the agent's own directory
// (~/.claude) but for its settings, hooks and rules. Its guarded paths
// are protected as a checkout's are, and the directory itself, and those
// on the way to a guarded path, cannot be moved or replaced.
type Guarded struct {
	Dir   string
	Paths []string
}

// TakeSnapshot records the protected paths of the checkouts whose tops
// are dirs (absolute; links on the way to a top are resolved first), and
// the guarded paths of guarded.
func TakeSnapshot(dirs []string, guarded ...Guarded) (*Snapshot, error) {
	s := &Snapshot{dirs: map[string]*dirRef{}}
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
		if err != nil || seen[top] {
			continue // no checkout there
		}
		seen[top] = true
		if err := s.discover(top); err != nil {
			s.Close()
			return nil, fmt.Errorf("recording the protected paths: %w", err)
		}
	}
	for _, g := range guarded {
		if !filepath.IsAbs(g.Dir) {
			continue
		}
		dir, err := filepath.EvalSymlinks(g.Dir)
		if err != nil || s.openDir(dir) == nil {
			continue // not there: nothing to write into
		}
		if !slices.Contains(s.watched, dir) {
			s.watched = append(s.watched, dir)
		}
		for _, r := range g.Paths {
			s.add(filepath.Join(dir, r), strings.HasSuffix(r, "/"))
		}
	}
	for _, e := range s.entries {
		e.was = map[string]fileState{}
		if err := s.record(e, e.was, nil); err != nil {
			s.Close()
			return nil, fmt.Errorf("recording the protected paths: %w", err)
		}
	}
	return s, nil
}

// Close releases the descriptors of the snapshot; Restore closes them too.
func (s *Snapshot) Close() {
	if s == nil || s.closed {
		return
	}
	s.closed = true
	for _, d := range s.dirs {
		unix.Close(d.fd)
	}
}

// Paths are the protected paths the snapshot holds, absolute, sorted.
func (s *Snapshot) Paths() []string {
	var out []string
	for _, e := range s.entries {
		out = append(out, e.path)
	}
	sort.Strings(out)
	return out
}

// Protects reports whether p (absolute, clean) is one of the protected
// paths of the snapshot, or lies below one protected with all below it.
func (s *Snapshot) Protects(p string) bool {
	for _, e := range s.entries {
		if p == e.path || e.tree && strings.HasPrefix(p, e.path+"/") {
			return true
		}
	}
	return false
}

// openDir opens the directory p (absolute, no link on the way from its
// deepest opened ancestor), keeping the descriptor; nil when it is not
// there, or not a directory.
func (s *Snapshot) openDir(p string) *dirRef {
	p = filepath.Clean(p)
	if d, ok := s.dirs[p]; ok {
		return d
	}
	var parent *dirRef
	var fd int
	var err error
	if p == "/" {
		fd, err = unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		if parent = s.openDir(filepath.Dir(p)); parent == nil {
			return nil
		}
		fd, err = unix.Openat(parent.fd, filepath.Base(p), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return nil
	}
	d := &dirRef{fd: fd, path: p, parent: parent, name: filepath.Base(p), id: FileID{uint64(st.Dev), uint64(st.Ino)}}
	s.dirs[p] = d
	return d
}

// add adds the protected path p (absolute; a directory with all below it
// when tree).
func (s *Snapshot) add(p string, tree bool) {
	p = filepath.Clean(p)
	for _, e := range s.entries {
		if e.path == p {
			e.tree = e.tree || tree
			return
		}
	}
	at := filepath.Dir(p)
	rest := []string{filepath.Base(p)}
	var d *dirRef
	for {
		if d = s.openDir(at); d != nil || at == "/" {
			break
		}
		rest = append([]string{filepath.Base(at)}, rest...)
		at = filepath.Dir(at)
	}
	if d == nil {
		return
	}
	s.entries = append(s.entries, &entry{path: p, at: d, rest: rest, tree: tree})
}

// discover adds the protected paths of the checkout at top.
func (s *Snapshot) discover(top string) error {
	if s.openDir(top) == nil {
		return nil
	}
	s.watched = append(s.watched, top)
	for _, r := range ProtectedInCheckout {
		s.add(filepath.Join(top, r), strings.HasSuffix(r, "/"))
	}
	// The overlays: vendor/<x>/.agents/config, those there now protected,
	// a new one undone.
	vendor := filepath.Join(top, "vendor")
	od := overlayDirs{top: s.openDir(top), had: map[string]bool{}, path: vendor}
	if ents, err := os.ReadDir(vendor); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				if fi, err := os.Lstat(filepath.Join(vendor, e.Name(), ".agents")); err == nil {
					od.had[e.Name()] = true
					if fi.IsDir() {
						s.add(filepath.Join(vendor, e.Name(), configDir), true)
					}
				}
			}
		}
	}
	s.overlays = append(s.overlays, od)
	// The repositories: the checkout's, and those below it.
	walked := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if walked >= maxWalk {
			if !slices.Contains(s.Partial, top) {
				s.Partial = append(s.Partial, top)
			}
			return
		}
		walked++
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.Name() == ".git" {
				s.repo(dir)
				continue
			}
			if e.IsDir() && depth < maxDepth && !notWalked[e.Name()] {
				walk(filepath.Join(dir, e.Name()), depth+1)
			}
		}
	}
	walk(top, 0)
	return nil
}

// configDir is an overlay's configuration directory (manifest.ConfigDir).
const configDir = ".agents/config"

// repo adds the protected paths of the repository whose worktree is w:
// its .git (a directory, or a file naming the git directory), the
// protected paths of its git directory, of the common directory that
// names, of its submodules' and linked worktrees' git directories, and
// the directory core.hooksPath names.
func (s *Snapshot) repo(w string) {
	dot := filepath.Join(w, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return
	}
	// A nested repository is a checkout of its own, where a person may
	// start an agent or agents-setup.
	for _, r := range ProtectedInCheckout {
		s.add(filepath.Join(w, r), strings.HasSuffix(r, "/"))
	}
	var gitDir string
	switch {
	case fi.IsDir():
		gitDir = dot
		s.add(dot, false) // its identity: a .git replaced is a plant
	case fi.Mode().IsRegular():
		s.add(dot, false)
		data, _ := readFile(dot, fi.Size())
		gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return
		}
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(w, gd)
		}
		if gitDir, err = filepath.EvalSymlinks(gd); err != nil {
			return
		}
	default:
		s.add(dot, false)
		return
	}
	s.gitDir(gitDir, w, 0)
}

// watch adds the git directory g to the watched directories, unless one
// holds it already.
func (s *Snapshot) watch(g string) {
	if !s.isWatched(g) {
		s.watched = append(s.watched, filepath.Dir(g))
	}
}

// isWatched reports whether p lies below a watched directory.
func (s *Snapshot) isWatched(p string) bool {
	for _, w := range s.watched {
		if strings.HasPrefix(p, w+"/") || w == "/" && p != "/" {
			return true
		}
	}
	return false
}

// gitDir adds the protected paths of the git directory g of the worktree
// w (depth counts the submodules above it).
func (s *Snapshot) gitDir(g, w string, depth int) {
	if depth > maxDepth {
		return
	}
	s.watch(g)
	for _, r := range protectedInGitDir {
		s.add(filepath.Join(g, r), strings.HasSuffix(r, "/"))
	}
	configs := []string{filepath.Join(g, "config"), filepath.Join(g, "config.worktree")}
	if c, err := os.ReadFile(filepath.Join(g, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(g, cd)
		}
		if cd, err := filepath.EvalSymlinks(cd); err == nil && cd != g {
			s.watch(cd)
			for _, r := range protectedInGitDir {
				s.add(filepath.Join(cd, r), strings.HasSuffix(r, "/"))
			}
			configs = append(configs, filepath.Join(cd, "config"))
		}
	}
	for _, c := range configs {
		for _, v := range gitConfigPaths(c) {
			p := expandGitPath(v.key, v.value, filepath.Dir(c), w)
			if p == "" {
				continue
			}
			// A hooks directory with all below it; an included file.
			s.add(p, v.key == "hookspath")
		}
	}
	// Submodules: modules/<name> (names may hold slashes).
	var modules func(dir string, d int)
	modules = func(dir string, d int) {
		ents, err := os.ReadDir(dir)
		if err != nil || d > maxDepth {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			m := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(m, "HEAD")); err == nil {
				s.gitDir(m, w, depth+1)
			} else {
				modules(m, d+1)
			}
		}
	}
	modules(filepath.Join(g, "modules"), 0)
	// Linked worktrees' administrative directories.
	if ents, err := os.ReadDir(filepath.Join(g, "worktrees")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				for _, r := range []string{"config.worktree", "commondir", "gitdir"} {
					s.add(filepath.Join(g, "worktrees", e.Name(), r), false)
				}
			}
		}
	}
}

type gitConfigValue struct{ key, value string }

// gitConfigPaths reads the values of a git config file that name other
// files git reads code to run from: core.hooksPath and include.path (and
// includeIf's), as key "hookspath" or "path". It reads what git reads
// closely enough for these keys: sections, case-insensitive names,
// quoted values; a file it cannot read yields nothing.
func gitConfigPaths(p string) []gitConfigValue {
	data, err := os.ReadFile(p)
	if err != nil || len(data) > maxProtected {
		return nil
	}
	var out []gitConfigValue
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 0 {
				continue
			}
			name := strings.TrimSpace(line[1:end])
			section = strings.ToLower(strings.Fields(name + " ")[0])
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `"`)
		}
		switch {
		case section == "core" && k == "hookspath":
			out = append(out, gitConfigValue{"hookspath", v})
		case (section == "include" || section == "includeif") && k == "path":
			out = append(out, gitConfigValue{"path", v})
		}
	}
	return out
}

// expandGitPath makes a path of a git config absolute as git would: ~/
// from the home directory, a relative hooksPath against the worktree, a
// relative include against the config's directory.
func expandGitPath(key, v, configDir, w string) string {
	if v == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(v, "~/"); ok {
		home := os.Getenv("HOME")
		if home == "" {
			return ""
		}
		return filepath.Join(home, rest)
	}
	if filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	if key == "path" {
		return filepath.Join(configDir, v)
	}
	return filepath.Join(w, v)
}

// walkTo opens the directory that holds e now, from e.at through the
// names that were not there at the snapshot; ok is false when one of
// them is still not there (nor the entry, then). A name on the way that
// is now something else than a directory is what blocks: its name is
// returned, to be removed.
func walkTo(e *entry) (dir int, owned bool, blocked string, ok bool) {
	dir = e.at.fd
	for _, name := range e.rest[:len(e.rest)-1] {
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			var st unix.Stat_t
			if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				// A link or a file where a directory was missing: a
				// plant on the way.
				return dir, owned, name, false
			}
			if owned {
				unix.Close(dir)
			}
			return -1, false, "", false
		}
		if owned {
			unix.Close(dir)
		}
		dir, owned = fd, true
	}
	return dir, owned, "", true
}

// record adds the state of e, and of all below it when it is a tree, to
// into. A settled regular file whose stat and size are those it had in
// was keeps was's content, unread.
func (s *Snapshot) record(e *entry, into, was map[string]fileState) error {
	dir, owned, blocked, ok := walkTo(e)
	if owned {
		defer unix.Close(dir)
	}
	if blocked != "" {
		into[blockedKey+blocked] = fileState{mode: fs.ModeIrregular}
	}
	if !ok {
		return nil
	}
	return s.recordAt(dir, e.rest[len(e.rest)-1], "", e.tree, into, was)
}

// blockedKey marks, in a state, a name on the way to an entry that is
// now something that is no directory.
const blockedKey = "\x00blocked/"

// recordAt records the file name in dir as rel, and below it when tree.
func (s *Snapshot) recordAt(dir int, name, rel string, tree bool, into, was map[string]fileState) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", name, err)
	}
	fst := fileState{mode: modeOf(&st), size: st.Size, stat: statKeyOfStat(&st)}
	old, known := was[rel]
	switch {
	case fst.mode&fs.ModeSymlink != 0:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return fmt.Errorf("reading link %s: %w", name, err)
		}
		fst.content = buf[:n]
	case fst.mode.IsRegular() && st.Size > maxProtected:
		fst.big = true
	case fst.mode.IsRegular() && known && old.mode == fst.mode && old.size == fst.size && !old.big &&
		old.stat == fst.stat && fst.stat.ctime.Before(s.before):
		fst.content = old.content
	case fst.mode.IsRegular():
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			fst.mode |= fs.ModeIrregular // unreadable: it cannot be what was kept
			break
		}
		fst.content, err = readAll(fd, st.Size)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	case fst.mode.IsDir() && tree:
		into[rel] = fst
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			// Unreadable (made so by the line): it cannot be what was
			// kept.
			fst.mode |= fs.ModeIrregular
			into[rel] = fst
			return nil
		}
		defer unix.Close(fd)
		names, err := readDirNames(fd)
		if err != nil {
			fst.mode |= fs.ModeIrregular
			into[rel] = fst
			return nil
		}
		for _, n := range names {
			if err := s.recordAt(fd, n, filepath.Join(rel, n), true, into, was); err != nil {
				return err
			}
		}
		return nil
	}
	into[rel] = fst
	return nil
}

// readDirNames lists the directory open as fd, sorted.
func readDirNames(fd int) ([]string, error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	if _, err := unix.Seek(dup, 0, 0); err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

func same(a, b fileState) bool {
	if a.mode.IsDir() || b.mode.IsDir() {
		return a.mode == b.mode
	}
	return a.mode == b.mode && a.big == b.big && a.size == b.size && bytes.Equal(a.content, b.content)
}

// UndoError is what Restore could not undo.
type UndoError struct {
	// Errs are the failures, each naming its path.
	Errs []error
	// Aside are plants that could not be removed and were renamed
	// aside, so that nothing runs them: where they are now.
	Aside []string
	// Live are protected paths whose plant could be neither removed
	// nor put aside: it is still there, and would act. A caller must
	// not run anything that could run it until a person removed it.
	Live []string
	// Moved are git directories and other protected directories the
	// line moved: their content was restored where they are now (Moved
	// names it), and what took their place was put aside.
	Moved []string
}

func (e *UndoError) Error() string {
	var parts []string
	for _, err := range e.Errs {
		parts = append(parts, err.Error())
	}
	for _, p := range e.Aside {
		parts = append(parts, "put aside, as it could not be removed: "+p)
	}
	for _, p := range e.Live {
		parts = append(parts, "could be neither undone nor put aside: "+p)
	}
	for _, p := range e.Moved {
		parts = append(parts, "moved: "+p)
	}
	return strings.Join(parts, "\n")
}

// Restore undoes the changes made since the snapshot to its protected
// paths, but those keep accepts (a change a person approved), and
// returns the paths it found changed, sorted; the error (an *UndoError)
// says what could not be undone. It closes the snapshot.
func (s *Snapshot) Restore(keep func(path string) bool) ([]string, error) {
	defer s.Close()
	if s.closed {
		return nil, errors.New("the snapshot was closed")
	}
	var roots []int
	for _, w := range s.watched {
		if d, ok := s.dirs[w]; ok {
			roots = append(roots, d.fd)
		}
	}
	var changed []string
	var err error
	// The undo may write only below the checkouts and their git
	// directories, whatever a path it is given names.
	confined(roots, func() { changed, err = s.restore(keep) })
	return changed, err
}

// held records what the tree's mount namespace held: mounts by mount
// point, true for read-only.
func (s *Snapshot) held(mounts map[string]bool) {
	s.readOnly, s.anchored = map[string]bool{}, map[string]bool{}
	for p, ro := range mounts {
		if ro {
			s.readOnly[p] = true
		}
		s.anchored[p] = true
	}
}

// restoreStep, when set (by tests), is called before each entry is
// restored, with its path.
var restoreStep func(path string)

func (s *Snapshot) restore(keep func(path string) bool) ([]string, error) {
	if keep == nil {
		keep = func(string) bool { return false }
	}
	u := &UndoError{}
	var changed []string
	// Directories of the snapshot that were moved or replaced: put back
	// what can be, and put aside what took their place.
	s.restoreDirs(u, &changed, keep)
	for _, e := range s.entries {
		if restoreStep != nil {
			restoreStep(e.path)
		}
		if s.readOnly[e.path] {
			continue // the tree could not change it
		}
		now := map[string]fileState{}
		if err := s.record(e, now, e.was); err != nil {
			u.Errs = append(u.Errs, fmt.Errorf("%s: %w", e.path, err))
			continue
		}
		var diff []string
		for rel, was := range e.was {
			if is, ok := now[rel]; !ok || !same(was, is) {
				diff = append(diff, rel)
			}
		}
		for rel := range now {
			if _, ok := e.was[rel]; !ok {
				diff = append(diff, rel)
			}
		}
		if len(diff) == 0 {
			continue
		}
		sort.Strings(diff)
		var undo []string
		for _, rel := range diff {
			p := e.path
			if strings.HasPrefix(rel, blockedKey) {
				p = filepath.Join(e.at.path, strings.TrimPrefix(rel, blockedKey))
			} else if rel != "" {
				p = filepath.Join(e.path, rel)
			}
			if keep(p) {
				continue
			}
			if !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
			undo = append(undo, rel)
		}
		if len(undo) > 0 {
			s.undo(e, undo, now, u)
		}
	}
	s.restoreOverlays(u, &changed)
	// Once more: a directory swapped while the undo ran (by a process
	// outside the tree, or another session) is put back or named.
	s.restoreDirs(u, &changed, keep)
	sort.Strings(changed)
	changed = slices.Compact(changed)
	if len(u.Errs)+len(u.Aside)+len(u.Live)+len(u.Moved) > 0 {
		return changed, u
	}
	return changed, nil
}

// undo puts back the paths rel (relative to e, "" e itself) of e that
// changed, now being what is there.
func (s *Snapshot) undo(e *entry, rels []string, now map[string]fileState, u *UndoError) {
	for _, rel := range rels {
		if name, ok := strings.CutPrefix(rel, blockedKey); ok {
			// A name on the way, missing at the snapshot, is now a link
			// or a file: remove it.
			if err := removeAt(e.at.fd, name); err != nil {
				s.aside(e.at, name, filepath.Join(e.at.path, name), u)
			}
		}
	}
	dir, owned, _, ok := walkTo(e)
	if owned {
		defer unix.Close(dir)
	}
	if !ok {
		return // the way is missing: so is the entry, as it was
	}
	name := e.rest[len(e.rest)-1]
	err := func() error {
		// Deepest first removes what was added below before what was
		// added above; shallowest first puts back directories before
		// their files.
		for i := len(rels) - 1; i >= 0; i-- {
			rel := rels[i]
			if strings.HasPrefix(rel, blockedKey) {
				continue
			}
			if _, there := now[rel]; !there {
				continue
			}
			was, had := e.was[rel]
			is := now[rel]
			if had && was.mode.IsDir() && is.mode.IsDir() {
				continue // a directory whose mode changed: chmod below
			}
			if err := removeBelow(dir, name, rel); err != nil {
				return err
			}
		}
		for _, rel := range rels {
			was, had := e.was[rel]
			if !had || strings.HasPrefix(rel, blockedKey) {
				continue
			}
			if err := putBelow(dir, name, rel, was); err != nil {
				return err
			}
		}
		return nil
	}()
	if err == nil {
		return
	}
	// What cannot be undone in place is put aside whole, and the entry
	// made again as it was.
	if s.aside(&dirRef{fd: dir, path: filepath.Dir(e.path)}, name, e.path, u) {
		for _, rel := range sortedKeys(e.was) {
			if err := putBelow(dir, name, rel, e.was[rel]); err != nil {
				u.Errs = append(u.Errs, fmt.Errorf("restoring %s: %w", filepath.Join(e.path, rel), err))
			}
		}
	}
}

// aside renames name in d out of the way (name.agent-shim-aside-N) and
// says so; false, and the path is live, when it cannot.
func (s *Snapshot) aside(d *dirRef, name, path string, u *UndoError) bool {
	for i := 0; i < 100; i++ {
		to := fmt.Sprintf("%s.agent-shim-aside-%d", name, time.Now().UnixNano()+int64(i))
		err := renameNoReplace(d.fd, name, d.fd, to)
		switch {
		case err == nil:
			u.Aside = append(u.Aside, filepath.Join(d.path, to))
			return true
		case errors.Is(err, unix.EEXIST):
			continue
		case errors.Is(err, unix.ENOENT):
			return true
		}
		break
	}
	u.Live = append(u.Live, path)
	return false
}

// restoreDirs puts back the directories of the snapshot that the line
// moved or replaced (a .git swapped for a link, a hooks directory moved
// away): what stands at the name now is put aside, and the directory the
// snapshot opened moved back to it when it can be found.
func (s *Snapshot) restoreDirs(u *UndoError, changed *[]string, keep func(string) bool) {
	var refs []*dirRef
	for _, d := range s.dirs {
		if d.parent != nil && s.isWatched(d.path) && !s.anchored[d.path] {
			refs = append(refs, d)
		}
	}
	// Shallowest first: a parent put back may put back its children.
	sort.Slice(refs, func(i, j int) bool { return len(refs[i].path) < len(refs[j].path) })
	for _, d := range refs {
		st, err := fstatat(d.parent.fd, d.name)
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && (FileID{uint64(st.Dev), uint64(st.Ino)}) == d.id {
			continue
		}
		if keep(d.path) {
			continue
		}
		*changed = append(*changed, d.path)
		if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A link or a file in its place: removed.
			if rerr := unix.Unlinkat(d.parent.fd, d.name, 0); rerr != nil && !s.aside(d.parent, d.name, d.path, u) {
				continue
			}
		} else if err == nil && !s.aside(d.parent, d.name, d.path, u) {
			continue
		}
		if own, err := fstatFd(d.fd); err == nil && own.Nlink == 0 {
			continue // removed: its entries put back what was in it
		}
		// Where is the directory now? Its parent now, and its name there.
		if where, ok := s.moveBack(d); !ok {
			u.Moved = append(u.Moved, d.path+" (now at "+where+")")
		}
	}
}

// moveBack moves the directory d back to its name, finding it through
// its descriptor; where says where it is when it cannot.
func (s *Snapshot) moveBack(d *dirRef) (where string, ok bool) {
	pfd, err := unix.Openat(d.fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "an unknown place", false
	}
	defer unix.Close(pfd)
	names, err := readDirNames(pfd)
	if err != nil {
		return "an unknown place", false
	}
	for _, n := range names {
		st, err := fstatat(pfd, n)
		if err != nil || (FileID{uint64(st.Dev), uint64(st.Ino)}) != d.id {
			continue
		}
		if err := renameNoReplace(pfd, n, d.parent.fd, d.name); err == nil {
			return "", true
		}
		if link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", d.fd)); err == nil {
			return link, false
		}
		return n + " in another directory", false
	}
	return "an unknown place", false
}

// restoreOverlays removes the configuration directory of an overlay that
// was not there at the snapshot: a new vendor/<x>/.agents.
func (s *Snapshot) restoreOverlays(u *UndoError, changed *[]string) {
	for _, od := range s.overlays {
		if od.top == nil {
			continue
		}
		vfd, err := unix.Openat(od.top.fd, "vendor", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		names, _ := readDirNames(vfd)
		for _, n := range names {
			if od.had[n] {
				continue
			}
			xfd, err := unix.Openat(vfd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			if _, err := fstatat(xfd, ".agents"); err == nil {
				p := filepath.Join(od.path, n, ".agents")
				*changed = append(*changed, p)
				if err := removeAt(xfd, ".agents"); err != nil {
					s.aside(&dirRef{fd: xfd, path: filepath.Join(od.path, n)}, ".agents", p, u)
				}
			}
			unix.Close(xfd)
		}
		unix.Close(vfd)
	}
}

func sortedKeys(m map[string]fileState) []string {
	var out []string
	for k := range m {
		if !strings.HasPrefix(k, blockedKey) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// openBelow opens the directory that holds rel below name in dir
// (name/rel's parent), following no link; it returns that directory and
// rel's last name.
func openBelow(dir int, name, rel string) (int, string, error) {
	parts := []string{name}
	if rel != "" {
		parts = append(parts, strings.Split(rel, "/")...)
	}
	fd := dir
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if fd != dir {
			unix.Close(fd)
		}
		if err != nil {
			return -1, "", err
		}
		fd = next
	}
	if fd == dir {
		var err error
		if fd, err = unix.FcntlInt(uintptr(dir), unix.F_DUPFD_CLOEXEC, 0); err != nil {
			return -1, "", err
		}
	}
	return fd, parts[len(parts)-1], nil
}

// removeBelow removes name/rel in dir, whatever it is, with all below it.
func removeBelow(dir int, name, rel string) error {
	fd, last, err := openBelow(dir, name, rel)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	return removeAt(fd, last)
}

// removeAt removes name in dir, a directory with all below it, following
// no link. A directory it cannot read (its mode) it makes readable first.
func removeAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		if unix.Fchmodat(dir, name, 0o700, 0) == nil {
			fd, err = unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return err
	}
	names, err := readDirNames(fd)
	if err == nil {
		for _, n := range names {
			if err = removeAt(fd, n); err != nil {
				break
			}
		}
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// putBelow makes name/rel in dir what was says; what is there is removed
// first but a directory, whose mode is set.
func putBelow(dir int, name, rel string, was fileState) error {
	if was.big {
		return errors.New("too large to have been kept")
	}
	fd, last, err := openBelow(dir, name, rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if st, err := fstatat(fd, last); err == nil {
		if was.mode.IsDir() && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return unix.Fchmodat(fd, last, uint32(was.mode.Perm()), 0)
		}
		if err := removeAt(fd, last); err != nil {
			return err
		}
	}
	switch {
	case was.mode.IsDir():
		if err := unix.Mkdirat(fd, last, 0o700); err != nil {
			return err
		}
		return unix.Fchmodat(fd, last, uint32(was.mode.Perm()), 0)
	case was.mode&fs.ModeSymlink != 0:
		return unix.Symlinkat(string(was.content), fd, last)
	}
	f, err := unix.Openat(fd, last, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer unix.Close(f)
	for b := was.content; len(b) > 0; {
		n, err := unix.Write(f, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return unix.Fchmod(f, uint32(was.mode.Perm()))
}

func fstatFd(fd int) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func fstatat(dir int, name string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return &st, nil
}

// modeOf is st's mode as fs.FileMode.
func modeOf(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// readAll reads the regular file open as fd, of the size Fstat gave.
func readAll(fd int, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > maxProtected {
			return buf, nil // grew past the bound: not what was kept
		}
	}
}
