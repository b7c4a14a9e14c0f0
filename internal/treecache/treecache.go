// Package treecache is the run-time layer's cache directory for the
// process trees of agents' lines: one directory of its own, separate from
// the person's caches and from agent-shim's protected state, where the
// package and build caches of a line under the layer go (Go's build and
// module caches, npm's, cargo's, ccache's, and through XDG_CACHE_HOME
// every tool that keeps its cache there: pip, uv, yarn, deno, …).
//
// The person's caches are read-only to the tree: a build cache entry
// the tree wrote would run at the person's next build (a poisoned Go
// build cache entry runs at the next `go run`). The tree's caches are
// written only by lines under the layer and read by nothing else: the
// person's own builds never point there. They are untrusted: a line may
// leave anything in them for a later line, which runs under the layer
// too, every execution decided.
//
// Go modules the person has already downloaded are not fetched again: the
// tree's GOPROXY reads the person's module cache (read-only, as a file://
// proxy) first and the person's own GOPROXY after it; the go command
// checks what it reads against go.sum and the checksum database as it
// checks what any proxy serves.
//
// The directory is $XDG_CACHE_HOME/agent-shim-tree (~/.cache/agent-shim-tree),
// made by the person's process and refused when it is anything but a
// directory of the person's own (a link planted before the person's
// cache directory was read-only to the tree would lend the tree the
// link's target). Its size is bounded (MaxSize): once a day, the first
// line under the layer measures it, and when it is over the bound the
// largest of its top directories (one per tool) are removed until it is
// under three quarters of it. Go's build cache also trims itself (entries
// unused for five days).
package treecache

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Name is the tree's cache directory's name in the person's cache
// directory.
const Name = "agent-shim-tree"

// xdgSub is the directory of the tree's caches that the tree's
// XDG_CACHE_HOME names.
const xdgSub = "xdg"

// MaxSize is the size the tree's caches are trimmed to stay under, in
// bytes.
const MaxSize = 10 << 30

// Root returns the tree's cache directory for the person's environment
// getenv: $XDG_CACHE_HOME/agent-shim-tree, else ~/.cache/agent-shim-tree;
// "" when neither XDG_CACHE_HOME nor HOME is an absolute path. A process
// that already runs under the layer (its XDG_CACHE_HOME is a tree's)
// shares its tree's directory. Root looks at nothing on disk.
func Root(getenv func(string) string) string {
	home := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(home) {
		h := getenv("HOME")
		if !filepath.IsAbs(h) {
			return ""
		}
		home = filepath.Join(h, ".cache")
	}
	home = filepath.Clean(home)
	if filepath.Base(home) == xdgSub && filepath.Base(filepath.Dir(home)) == Name {
		return filepath.Dir(home)
	}
	return filepath.Join(home, Name)
}

// Cache is the tree's cache directory, made and checked.
type Cache struct {
	// Root is the directory, absolute and clean.
	Root string
}

// ErrNotOwn means the tree's cache directory exists but is not a
// directory of the person's own: a link, another file, or another
// user's. Nothing runs until the person removes it.
var ErrNotOwn = errors.New("not a directory of its own")

// Open makes the tree's cache directory for the environment getenv (the
// person's) when it is missing, and checks that it is a directory, not a
// link, owned by this process's user and writable by nobody else.
func Open(getenv func(string) string) (*Cache, error) {
	root := Root(getenv)
	if root == "" {
		return nil, errors.New("finding the tree's cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path")
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o700); err != nil {
		return nil, fmt.Errorf("making the tree's cache directory: %w", err)
	}
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("making the tree's cache directory: %w", err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, fmt.Errorf("checking the tree's cache directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Errorf("the tree's cache directory %s is a symbolic link, %w", root, ErrNotOwn)
	case !fi.IsDir():
		return nil, fmt.Errorf("the tree's cache directory %s is not a directory, %w", root, ErrNotOwn)
	case !ok || int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("the tree's cache directory %s is another user's, %w", root, ErrNotOwn)
	case fi.Mode().Perm()&0o022 != 0:
		return nil, fmt.Errorf("the tree's cache directory %s is writable by others (mode %v), %w", root, fi.Mode().Perm(), ErrNotOwn)
	}
	// XDG_CACHE_HOME, which tools expect to exist.
	if err := os.Mkdir(filepath.Join(root, xdgSub), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("making the tree's cache directory: %w", err)
	}
	return &Cache{Root: root}, nil
}

// A variable is one environment variable that points a tool's cache, and
// where the tree's points it (below Root).
type variable struct {
	name, sub string
	// ifSet: set only when the person set it; its default is below
	// XDG_CACHE_HOME already, which the tree's names.
	ifSet bool
}

// variables are the cache variables the tree's environment sets. The
// tools whose default cache is not below XDG_CACHE_HOME are set always;
// the others only when the person moved them elsewhere.
var variables = []variable{
	{"XDG_CACHE_HOME", xdgSub, false},
	{"GOCACHE", "go-build", false},
	{"GOMODCACHE", "go-mod", false},
	{"GOPATH", "go", false},                     // the checksum database's state: GOPATH/pkg/sumdb
	{"npm_config_cache", "npm", false},          // ~/.npm
	{"YARN_GLOBAL_FOLDER", "yarn-berry", false}, // ~/.yarn/berry: Yarn 2+'s global cache
	{"BUN_INSTALL_CACHE_DIR", "bun", false},     // ~/.bun/install/cache
	{"CARGO_HOME", "cargo", false},              // ~/.cargo: the registry's index and crates
	{"CCACHE_DIR", "ccache", false},             // ~/.ccache when it exists
	{"CARGO_TARGET_DIR", "cargo-target", true},  // default: the package's target/
	{"PIP_CACHE_DIR", "xdg/pip", true},
	{"UV_CACHE_DIR", "xdg/uv", true},
	{"POETRY_CACHE_DIR", "xdg/pypoetry", true},
	{"YARN_CACHE_FOLDER", "xdg/yarn", true},
	{"DENO_DIR", "xdg/deno", true},
	{"SCCACHE_DIR", "xdg/sccache", true},
	{"ZIG_GLOBAL_CACHE_DIR", "xdg/zig", true},
}

// Env returns environ (NAME=value entries, as os.Environ gives them: the
// person's environment) with the cache variables set to the tree's, and
// GOPROXY reading the person's module cache first. What the line sets
// itself it sets for its own commands: where they may write is the
// layer's to say, not the variables'.
func (c *Cache) Env(environ []string) []string {
	lookup := func(name string) (string, bool) {
		for i := len(environ) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
	var set []string
	for _, v := range variables {
		if _, ok := lookup(v.name); v.ifSet && !ok {
			continue
		}
		set = append(set, v.name+"="+filepath.Join(c.Root, v.sub))
	}
	g := goSettings(lookup)
	if p := c.goproxy(g); p != "" {
		set = append(set, "GOPROXY="+p)
	}
	if bin := g.bin(); bin != "" && !within(bin, c.Root) {
		// go install installs where the person's go would (and the
		// layer says whether the line may write there).
		set = append(set, "GOBIN="+bin)
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, e := range environ {
		if !replaced(e, set) {
			out = append(out, e)
		}
	}
	return append(out, set...)
}

// replaced reports whether the entry e is a variable set sets: the same
// name, or for npm's, which npm reads whatever their case
// (NPM_CONFIG_CACHE), any spelling of it.
func replaced(e string, set []string) bool {
	k, _, _ := strings.Cut(e, "=")
	for _, s := range set {
		name, _, _ := strings.Cut(s, "=")
		if k == name || strings.HasPrefix(name, "npm_config_") && strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// goproxy is the tree's GOPROXY: the person's module cache's downloads
// as a file:// proxy, then the person's GOPROXY; "" to leave GOPROXY as
// it is (the person has no module cache, or it is the tree's own).
func (c *Cache) goproxy(g *goEnv) string {
	mod := g.modcache()
	if mod == "" || within(mod, c.Root) {
		return ""
	}
	dl := filepath.Join(mod, "cache", "download")
	if fi, err := os.Stat(dl); err != nil || !fi.IsDir() {
		return ""
	}
	return "file://" + escapePath(dl) + "," + g.get("GOPROXY")
}

// goEnv is the person's go settings, as the go command reads them: the
// environment, then the user's go env file (go env -w), then GOROOT's
// go.env.
type goEnv struct {
	lookup     func(string) (string, bool)
	user, root map[string]string
	rootRead   bool
}

func goSettings(lookup func(string) (string, bool)) *goEnv {
	g := &goEnv{lookup: lookup}
	file, ok := lookup("GOENV")
	if !ok || file == "" {
		if d, ok := lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(d) {
			file = filepath.Join(d, "go", "env")
		} else if h, ok := lookup("HOME"); ok && filepath.IsAbs(h) {
			file = filepath.Join(h, ".config", "go", "env")
		}
	}
	if file != "off" && filepath.IsAbs(file) {
		g.user = readEnvFile(file)
	}
	return g
}

// get is the setting key as the go command would see it.
func (g *goEnv) get(key string) string {
	if v, ok := g.lookup(key); ok && v != "" {
		return v
	}
	if v := g.user[key]; v != "" {
		return v
	}
	if !g.rootRead {
		g.rootRead = true
		g.root = readEnvFile(goRootEnv(g.lookup, g.user["GOROOT"]))
	}
	if v := g.root[key]; v != "" {
		return v
	}
	if key == "GOPROXY" {
		return "https://proxy.golang.org,direct"
	}
	return ""
}

// modcache is the person's module cache: GOMODCACHE, else the first
// GOPATH's pkg/mod, else ~/go/pkg/mod.
func (g *goEnv) modcache() string {
	if m := g.get("GOMODCACHE"); filepath.IsAbs(m) {
		return filepath.Clean(m)
	}
	gopath := g.get("GOPATH")
	if first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator)); filepath.IsAbs(first) {
		return filepath.Join(first, "pkg", "mod")
	}
	if h, ok := g.lookup("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, "go", "pkg", "mod")
	}
	return ""
}

// bin is where the person's go install installs: GOBIN, else the first
// GOPATH's bin, else ~/go/bin; "" when GOBIN is the go env file's (the
// tree's go reads that file too) or there is no home.
func (g *goEnv) bin() string {
	if v, ok := g.lookup("GOBIN"); ok && v != "" {
		return v
	}
	if g.user["GOBIN"] != "" {
		return ""
	}
	if first, _, _ := strings.Cut(g.get("GOPATH"), string(filepath.ListSeparator)); filepath.IsAbs(first) {
		return filepath.Join(first, "bin")
	}
	if h, ok := g.lookup("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, "go", "bin")
	}
	return ""
}

// goRootEnv is GOROOT's go.env: of GOROOT as set, else of the go found on
// PATH; "" when there is none.
func goRootEnv(lookup func(string) (string, bool), userRoot string) string {
	root, _ := lookup("GOROOT")
	if root == "" {
		root = userRoot
	}
	if root == "" {
		path, _ := lookup("PATH")
		for _, dir := range filepath.SplitList(path) {
			if !filepath.IsAbs(dir) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, "go")); err == nil && fi.Mode().IsRegular() {
				if real, err := filepath.EvalSymlinks(filepath.Join(dir, "go")); err == nil {
					root = filepath.Dir(filepath.Dir(real))
				}
				break
			}
		}
	}
	if !filepath.IsAbs(root) {
		return ""
	}
	return filepath.Join(root, "go.env")
}

// readEnvFile reads a go env file's KEY=VALUE lines as the go command
// does; nil when it cannot be read.
func readEnvFile(file string) map[string]string {
	if file == "" {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	m := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		k, v, ok := strings.Cut(line, "=")
		if !ok || line[0] < 'A' || line[0] > 'Z' {
			continue
		}
		m[k] = v
	}
	return m
}

// escapePath escapes p for a file:// URL in a GOPROXY list: every byte
// but letters, digits and /._-~ percent-encoded (a comma or a bar would
// end the entry).
func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._-~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// within reports whether p is dir or below it (both clean).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
