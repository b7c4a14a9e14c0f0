//go:build linux && (amd64 || arm64)

package supervisor

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// loaderGlobs find the dynamic loaders, whose copies are loaders too.
var loaderGlobs = []string{"/lib64/ld-*.so*", "/lib/ld-*.so*", "/lib/*/ld-*.so*", "/usr/lib/ld-*.so*", "/usr/lib/*/ld-*.so*", "/lib64/ld64.so*"}

// isLoader reports whether the program named path is a dynamic loader,
// which runs the program it is given: ld-linux-x86-64.so.2, ld.so,
// ld-musl-x86_64.so.1, ld64.so.2.
func isLoader(path string) bool {
	b := filepath.Base(path)
	return b == "ld.so" || strings.HasPrefix(b, "ld-") && strings.Contains(b, ".so") ||
		strings.HasPrefix(b, "ld64.so")
}

// fileID is a file's identity; fileKey also says which version of it.
type fileID struct{ dev, ino uint64 }

type fileKey struct {
	fileID
	size         int64
	mtime, ctime unix.Timespec
}

func keyOf(st *unix.Stat_t) fileKey {
	return fileKey{fileID{st.Dev, st.Ino}, st.Size, st.Mtim, st.Ctim}
}

// copies tells the copies of the restricted programs (Config.Programs,
// found on the tree's PATH, and the dynamic loaders) from other files: a
// hard link by identity, a copy by a digest of its content, computed only
// for a file as large as one of them. It is built on first use.
type copies struct {
	names []string
	path  string // the PATH they are found on

	once   sync.Once
	byID   map[fileID][]string
	bySize map[int64][]string

	mu      sync.Mutex
	digests map[fileKey][sha256.Size]byte
}

func newCopies(names []string, env []string) *copies {
	c := &copies{names: names, digests: map[fileKey][sha256.Size]byte{}}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			c.path = v
			break // the first, as getenv reads it
		}
	}
	return c
}

func (c *copies) build() {
	c.byID, c.bySize = map[fileID][]string{}, map[int64][]string{}
	add := func(p string) {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return
		}
		id := fileID{st.Dev, st.Ino}
		for _, q := range c.byID[id] {
			if filepath.Base(q) == filepath.Base(p) {
				return
			}
		}
		c.byID[id] = append(c.byID[id], p)
		c.bySize[st.Size] = append(c.bySize[st.Size], p)
	}
	for _, dir := range filepath.SplitList(c.path) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry names a directory of the tree
		}
		for _, n := range c.names {
			add(filepath.Join(dir, n))
		}
	}
	for _, g := range loaderGlobs {
		ms, _ := filepath.Glob(g)
		for _, m := range ms {
			add(m)
		}
	}
}

// of returns the restricted programs the file real (stat st) is, by
// identity or content, other than by its own name.
func (c *copies) of(real string, st *unix.Stat_t) []string {
	c.once.Do(c.build)
	var out []string
	base := filepath.Base(real)
	add := func(p string) {
		if filepath.Base(p) != base {
			out = append(out, p)
		}
	}
	for _, p := range c.byID[fileID{st.Dev, st.Ino}] {
		add(p)
	}
	cands := c.bySize[st.Size]
	if len(cands) == 0 || len(out) > 0 {
		return out
	}
	d, ok := c.digest(real, st)
	if !ok {
		return out
	}
	for _, p := range cands {
		var pst unix.Stat_t
		if unix.Stat(p, &pst) != nil || pst.Dev == st.Dev && pst.Ino == st.Ino {
			continue
		}
		if pd, ok := c.digest(p, &pst); ok && pd == d {
			add(p)
		}
	}
	return out
}

// digest returns the SHA-256 of the file at p, kept by its identity and
// version.
func (c *copies) digest(p string, st *unix.Stat_t) ([sha256.Size]byte, bool) {
	k := keyOf(st)
	c.mu.Lock()
	d, ok := c.digests[k]
	c.mu.Unlock()
	if ok {
		return d, true
	}
	f, err := os.Open(p)
	if err != nil {
		return d, false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return d, false
	}
	copy(d[:], h.Sum(nil))
	c.mu.Lock()
	c.digests[k] = d
	c.mu.Unlock()
	return d, true
}
