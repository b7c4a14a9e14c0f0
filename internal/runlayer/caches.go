package runlayer

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/treecache"
	"github.com/agent-shim/agent-shim/statefile"
)

// A line under the layer writes its package and build caches in the
// tree's cache directory (package treecache), never in the person's: the
// person's caches are read-only to it, and the variables that point the
// tools' caches are set in the tree's environment by this process, from
// the person's environment.

// cacheRoot is the tree's cache directory for the environment getenv.
func cacheRoot(getenv func(string) string) string { return treecache.Root(getenv) }

// treeEnv returns environ with the tree's caches, and the tree's cache
// directory, made and checked. A directory that is not the person's own
// (a planted link) refuses the line; one that cannot be made (no home, a
// read-only one) leaves the line without caches it may write, and says
// so: the person's stay read-only to it either way.
func (r *Run) treeEnv(environ []string) ([]string, *treecache.Cache, error) {
	c, err := treecache.Open(r.Getenv)
	if errors.Is(err, treecache.ErrNotOwn) {
		return nil, nil, &Hinted{err, "remove " + treecache.Root(r.Getenv) + ": agent-shim makes a new one"}
	}
	if err != nil {
		fmt.Fprintf(r.Stderr, "agent-shim: warning: %s: the line's builds have no cache they may write\n", oneLine(err.Error()))
		return environ, nil, nil
	}
	return c.Env(environ), c, nil
}

// trimCaches trims the tree's caches once a day (treecache.TrimDaily),
// after a line, and says what it removed.
func (r *Run) trimCaches(c *treecache.Cache) {
	if c == nil {
		return
	}
	home, err := statefile.StateHome(r.Getenv)
	if err != nil {
		return
	}
	t, done, err := c.TrimDaily(filepath.Join(home, "agent-shim", "tree-cache.trimmed"), treecache.MaxSize, r.Now())
	if err != nil {
		fmt.Fprintf(r.Stderr, "agent-shim: warning: trimming the tree's caches: %s\n", oneLine(err.Error()))
	}
	if done && len(t.Removed) > 0 {
		fmt.Fprintf(r.Stderr, "agent-shim: note: the tree's caches held %d MiB, over %d MiB: removed %s\n",
			t.Size>>20, treecache.MaxSize>>20, strings.Join(t.Removed, ", "))
	}
}

// personsCache reports whether p is in one of the person's caches: the
// person's cache directory (but the tree's), or a tool's own outside it.
func (r *Run) personsCache(p string) bool {
	root := cacheRoot(r.Getenv)
	if root == "" || within(p, root) {
		return false
	}
	var dirs []string
	if d := r.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		dirs = append(dirs, filepath.Clean(d))
	}
	if h := r.Getenv("HOME"); filepath.IsAbs(h) {
		for _, d := range []string{".cache", ".npm", ".cargo/registry", ".cargo/git", "go/pkg/mod", ".yarn", ".bun", ".ccache", ".gradle/caches", ".m2/repository"} {
			dirs = append(dirs, filepath.Join(h, d))
		}
	}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "npm_config_cache", "CARGO_HOME", "CCACHE_DIR", "PIP_CACHE_DIR"} {
		if d := r.Getenv(v); filepath.IsAbs(d) {
			dirs = append(dirs, filepath.Clean(d))
		}
	}
	return slices.ContainsFunc(dirs, func(d string) bool { return within(p, d) })
}

// logRefused records a write the layer refused in the decision log.
func (r *Run) logRefused(p string) {
	if r.Log == nil {
		return
	}
	r.Log.Log(gate.Decision{Verdict: gate.Deny, Reason: "a write outside the line's writable paths, refused by the run-time layer"}.Record(decisionlog.Entry{
		Time: r.Now(), Agent: r.Agent, Session: r.Session, Layer: decisionlog.LayerRuntime, Tool: "write", Command: p,
	}))
}

// within reports whether p is dir or below it (both clean).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// oneLine puts an error on one line.
func oneLine(s string) string { return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s) }
