package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/agent-shim/agent-shim/matcher"
)

// Scope is where the file tools may act without asking: its roots (the
// project, the user's own config roots) and allow patterns. A pattern is an
// exact path, a tree `dir/...` (dir and everything under it) or a glob
// (`/tmp/*.log`, `/opt/data/**`). Relative patterns are resolved against the
// first root. It is safe for concurrent use.
//
// Contains judges the path a file operation would really touch: `..` and
// symbolic links are resolved, so a link that points out of the scope is
// out of it, and a path that does not exist yet is resolved through its
// nearest existing parent.
type Scope struct {
	mu    sync.RWMutex
	roots []string
	pats  []scopePattern
}

type scopePattern struct {
	text  string
	tree  string         // dir of a dir/... pattern
	exact string         // an exact path
	re    *regexp.Regexp // a glob
}

// NewScope returns a scope of the given roots; empty roots are skipped.
// Relative roots are taken from the working directory. A root that is /,
// the home directory or an ancestor of it (see UnsafeRoot) is skipped too:
// home holds the ssh keys, the shell startup files and every agent's
// settings and credentials, and is never a project.
func NewScope(roots ...string) *Scope {
	s := &Scope{}
	home := realHome()
	for _, r := range roots {
		if r == "" {
			continue
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if real, ok := resolve(abs); ok && !UnsafeRoot(real, home) {
			s.roots = append(s.roots, real)
		}
	}
	return s
}

// UnsafeRoot reports whether dir, a clean absolute path, can never be the
// root of a scope: /, the home directory home (resolved; "" when unknown)
// or an ancestor of it.
func UnsafeRoot(dir, home string) bool {
	return dir == "/" || dir == "" || home != "" && within(home, dir)
}

// realHome is the home directory, links resolved; "" when unknown.
func realHome() string {
	h, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(h) {
		return ""
	}
	if real, ok := resolve(filepath.Clean(h)); ok {
		return real
	}
	return filepath.Clean(h)
}

// Roots returns the roots, resolved.
func (s *Scope) Roots() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string(nil), s.roots...)
}

// Patterns returns the allow patterns as written.
func (s *Scope) Patterns() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(s.pats))
	for i, p := range s.pats {
		out[i] = p.text
	}
	return out
}

// Allow adds an allow pattern.
func (s *Scope) allow(pattern string) error {
	p, err := s.compile(pattern)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.pats = append(s.pats, p)
	s.mu.Unlock()
	return nil
}

// clone returns a scope with s's roots and patterns, to which more can be
// added without changing s. A nil s clones to an empty scope.
func (s *Scope) clone() *Scope {
	out := &Scope{}
	if s == nil {
		return out
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out.roots = slices.Clone(s.roots)
	out.pats = slices.Clone(s.pats)
	return out
}

func (s *Scope) compile(pattern string) (scopePattern, error) {
	p := scopePattern{text: pattern}
	if strings.TrimSpace(pattern) == "" {
		return p, errors.New("empty path pattern")
	}
	abs, err := expandHome(pattern)
	if err != nil {
		return p, fmt.Errorf("path pattern %q: %w", pattern, err)
	}
	if !filepath.IsAbs(abs) {
		root := s.base()
		if root == "" {
			return p, fmt.Errorf("path pattern %q: relative, and the scope has no root", pattern)
		}
		abs = filepath.Join(root, abs)
	}
	if dir, ok := strings.CutSuffix(abs, "/..."); ok || abs == "/..." {
		if dir == "" {
			dir = "/"
		}
		if strings.ContainsAny(dir, `*?[\`) {
			return p, fmt.Errorf("path pattern %q: a tree (dir/...) cannot hold glob characters", pattern)
		}
		real, ok := resolve(dir)
		if !ok {
			return p, fmt.Errorf("path pattern %q: cannot resolve %s", pattern, dir)
		}
		if real == "/" {
			return p, fmt.Errorf("path pattern %q: allows the whole file system", pattern)
		}
		p.tree = real
		return p, nil
	}
	if !strings.ContainsAny(abs, `*?[\`) {
		real, ok := resolve(abs)
		if !ok {
			return p, fmt.Errorf("path pattern %q: cannot resolve %s", pattern, abs)
		}
		p.exact = real
		return p, nil
	}
	// A glob: resolve the directories before its first metacharacter, so
	// that it compares with resolved paths (/tmp may be a link).
	meta := strings.IndexAny(abs, `*?[\`)
	slash := strings.LastIndexByte(abs[:meta], '/')
	prefix, rest := abs[:slash], abs[slash:]
	if prefix == "" {
		prefix = "/"
	}
	if real, ok := resolve(prefix); ok {
		prefix = real
	}
	glob := strings.TrimSuffix(escapeGlob(prefix), "/") + rest
	if strings.Trim(glob, "/*") == "" {
		return p, fmt.Errorf("path pattern %q: allows the whole file system", pattern)
	}
	re, err := matcher.Glob(glob)
	if err != nil {
		return p, fmt.Errorf("path pattern %q: %w", pattern, err)
	}
	p.re = re
	return p, nil
}

// expandHome replaces a leading ~ (alone or before /) with the home
// directory, as the shell does.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding ~: %w", err)
	}
	return home + p[1:], nil
}

// base is the first root, which relative paths are taken from.
func (s *Scope) base() string {
	if len(s.roots) == 0 {
		return ""
	}
	return s.roots[0]
}

// Contains reports whether a file operation on path stays in the scope. A
// relative path is taken from the first root. A nil scope contains nothing.
func (s *Scope) contains(path string) bool {
	if s == nil || path == "" {
		return false
	}
	if !filepath.IsAbs(path) {
		// Not filepath.Join: cleaning `..` before a link is resolved
		// would judge another path than the one the call touches.
		s.mu.RLock()
		base := s.base()
		s.mu.RUnlock()
		if base == "" {
			return false
		}
		path = base + "/" + path
	}
	real, ok := s.resolve(path)
	if !ok {
		return false
	}
	return s.containsResolved(real)
}

// containsResolved is Contains for a path already resolved.
func (s *Scope) containsResolved(real string) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.matches(real)
}

// matches reports whether a resolved path is in the scope; s.mu is held.
func (s *Scope) matches(real string) bool {
	for _, r := range s.roots {
		if within(real, r) {
			return true
		}
	}
	for _, p := range s.pats {
		switch {
		case p.tree != "":
			if within(real, p.tree) {
				return true
			}
		case p.re != nil:
			if p.re.MatchString(real) {
				return true
			}
		case real == p.exact:
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it; both are clean.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir) && path[len(dir)] == '/'
}

// maxLinks bounds the symbolic links followed while resolving one path.
const maxLinks = 40

// resolve returns the path a file operation on abs would touch: each
// existing component's symbolic link followed, `..` applied to the real
// directory it follows, and components that do not exist yet taken as the
// directories they would be created as. ok is false for a link loop or an
// unreadable link.
func resolve(abs string) (string, bool) { return resolveFrom("/", abs) }

// resolve is the package's resolve, starting below the root the path is
// lexically in when it has no `..`: the roots are resolved already, so only
// the components below need a look.
func (s *Scope) resolve(abs string) (string, bool) {
	if s != nil && !strings.Contains(abs, "..") {
		clean := filepath.Clean(abs)
		s.mu.RLock()
		start := ""
		for _, r := range s.roots {
			if r != "/" && within(clean, r) && len(r) > len(start) {
				start = r
			}
		}
		s.mu.RUnlock()
		if start != "" {
			return resolveFrom(start, clean[len(start):])
		}
	}
	return resolve(abs)
}

// resolveFrom resolves rel below cur, a resolved directory.
func resolveFrom(cur, rel string) (string, bool) {
	parts := strings.Split(rel, "/")
	links := 0
	missing := false // a component did not exist: nothing below it does
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			// A directory created for a missing component would have
			// its parent back: look at the real components again.
			cur = filepath.Dir(cur)
			missing = false
			continue
		}
		next := filepath.Join(cur, part)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return "", false
			}
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxLinks {
			return "", false
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", false
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts[i+1:]...)
		i = -1
	}
	return cur, true
}

// tempDirs are the temporary directories, resolved, once: where the
// run-time layer lets the tree write (as internal/runlayer grants them:
// $TMPDIR, /tmp, /var/tmp, /dev/shm).
var tempDirs = sync.OnceValue(func() []string {
	var out []string
	for _, d := range []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} {
		if r, err := filepath.EvalSymlinks(d); err == nil && filepath.IsAbs(r) && r != "/" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
})

// inTempDir reports whether real (resolved) lies below a temporary
// directory. A write there is one the run-time layer lets the tree make;
// the static reading, which holds where the layer does not run, asks about
// it as about any write outside the scope: without the layer nothing
// keeps a link or a file planted there from being written through.
//
// The person's home is never temporary, even where it lies below one (a
// test's, a container's HOME=/tmp/x): what is written there is read by
// the person's next program; nor is a directory below one that holds it.
func inTempDir(real string) bool {
	h := personsHome()
	if h != "" && within(real, h) {
		return false
	}
	if dir := filepath.Dir(real); h != "" && within(h, dir) && !slices.Contains(tempDirs(), dir) {
		return false
	}
	for _, d := range tempDirs() {
		if real != d && within(real, d) {
			return true
		}
	}
	return false
}

// personsHome is $HOME, resolved; "" when unset or not absolute.
func personsHome() string {
	h := os.Getenv("HOME")
	if !filepath.IsAbs(h) {
		return ""
	}
	if r, err := filepath.EvalSymlinks(h); err == nil {
		return r
	}
	return filepath.Clean(h)
}
