package treecache

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestRoot(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"home", map[string]string{"HOME": "/home/me"}, "/home/me/.cache/agent-shim-tree"},
		{"xdg", map[string]string{"HOME": "/home/me", "XDG_CACHE_HOME": "/var/cache/me/"}, "/var/cache/me/agent-shim-tree"},
		{"relative xdg is ignored", map[string]string{"HOME": "/home/me", "XDG_CACHE_HOME": "cache"}, "/home/me/.cache/agent-shim-tree"},
		// A line under the layer runs agent-shim (agent-shim run -- an
		// agent, whose shell is agent-shim): its tree shares the caches.
		{"nested", map[string]string{"HOME": "/home/me", "XDG_CACHE_HOME": "/home/me/.cache/agent-shim-tree/xdg"}, "/home/me/.cache/agent-shim-tree"},
		{"no home", map[string]string{"HOME": "relative"}, ""},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate %q", tc.name)
		}
		seen[tc.name] = true
		if got := Root(env(tc.env)); got != tc.want {
			t.Errorf("%s: Root = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Open makes the directory, and refuses one that is not the person's own:
// a link planted when the person's cache directory was the tree's would
// lend the tree its target.
func TestOpen(t *testing.T) {
	home := t.TempDir()
	get := env(map[string]string{"HOME": home})
	c, err := Open(get)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(c.Root)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("Open made %v (%v)", fi, err)
	}
	if _, err := Open(get); err != nil {
		t.Fatalf("a second Open: %v", err)
	}

	target := filepath.Join(home, ".ssh")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(root string) error
	}{
		{"link", func(root string) error { return os.Symlink(target, root) }},
		{"file", func(root string) error { return os.WriteFile(root, nil, 0o600) }},
		{"writable by others", func(root string) error {
			if err := os.Mkdir(root, 0o700); err != nil {
				return err
			}
			return os.Chmod(root, 0o777)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(c.Root)
			if err := tc.plant(c.Root); err != nil {
				t.Fatal(err)
			}
			_, err := Open(get)
			if !errors.Is(err, ErrNotOwn) || !strings.Contains(err.Error(), c.Root) {
				t.Errorf("Open of a planted %s: %v, want ErrNotOwn naming %s", tc.name, err, c.Root)
			}
		})
	}
}

func lookupIn(e []string, name string) (string, bool) {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Env points every cache the tree's tools use at the tree's, whatever the
// person's environment said, and leaves the rest as it is.
func TestEnv(t *testing.T) {
	home := t.TempDir()
	c := &Cache{Root: filepath.Join(home, ".cache", Name)}
	in := []string{
		"HOME=" + home, "PATH=/usr/bin:/bin", "GOCACHE=" + home + "/.cache/go-build",
		"NPM_CONFIG_CACHE=" + home + "/.npm", "npm_config_registry=http://127.0.0.1:1/",
		"PIP_CACHE_DIR=" + home + "/pip", "GOFLAGS=-mod=mod", "GOENV=off",
	}
	out := c.Env(in)
	want := map[string]string{
		"XDG_CACHE_HOME":        c.Root + "/xdg",
		"GOCACHE":               c.Root + "/go-build",
		"GOMODCACHE":            c.Root + "/go-mod",
		"GOPATH":                c.Root + "/go",
		"GOBIN":                 home + "/go/bin", // the person's: go install installs there, if it may
		"npm_config_cache":      c.Root + "/npm",
		"CARGO_HOME":            c.Root + "/cargo",
		"CCACHE_DIR":            c.Root + "/ccache",
		"YARN_GLOBAL_FOLDER":    c.Root + "/yarn-berry",
		"BUN_INSTALL_CACHE_DIR": c.Root + "/bun",
		"PIP_CACHE_DIR":         c.Root + "/xdg/pip",
		// The person's, as they were.
		"HOME": home, "PATH": "/usr/bin:/bin", "GOFLAGS": "-mod=mod", "npm_config_registry": "http://127.0.0.1:1/",
	}
	for k, v := range want {
		if got, ok := lookupIn(out, k); !ok || got != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	for _, e := range out {
		k, _, _ := strings.Cut(e, "=")
		if strings.EqualFold(k, "npm_config_cache") && k != "npm_config_cache" {
			t.Errorf("%s is left beside npm_config_cache: npm reads either", e)
		}
	}
	// Set only where the person moved them: their defaults are below
	// XDG_CACHE_HOME.
	for _, k := range []string{"UV_CACHE_DIR", "CARGO_TARGET_DIR", "DENO_DIR", "GOPROXY"} {
		if v, ok := lookupIn(out, k); ok {
			t.Errorf("%s=%s set, though the person did not set it (and has no module cache)", k, v)
		}
	}
	// Three of the person's go (GOCACHE, NPM_CONFIG_CACHE,
	// PIP_CACHE_DIR); eleven of the tree's come.
	if len(out) != len(in)-3+11 {
		t.Errorf("Env gave %d entries for %d:\n%s", len(out), len(in), strings.Join(out, "\n"))
	}
}

// The tree's GOPROXY reads the person's module cache first, then the
// person's own GOPROXY, found as the go command finds it.
func TestEnvGoproxy(t *testing.T) {
	home := t.TempDir()
	c := &Cache{Root: filepath.Join(home, ".cache", Name)}
	mkdir := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(p, s string) {
		mkdir(filepath.Dir(p))
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goroot := mkdir(filepath.Join(home, "sdk", "go"))
	write(filepath.Join(goroot, "bin", "go"), "")
	os.Chmod(filepath.Join(goroot, "bin", "go"), 0o755)
	write(filepath.Join(goroot, "go.env"), "# comment\nGOPROXY=https://goroot.example/\nGOSUMDB=sum.golang.org\n")
	userEnv := filepath.Join(home, ".config", "go", "env")
	base := []string{"HOME=" + home, "PATH=/nonexistent:" + filepath.Join(goroot, "bin")}

	tests := []struct {
		name  string
		env   []string
		files map[string]string
		dl    string // the module cache's download directory to make
		want  string
	}{
		{"no module cache", nil, nil, "", ""},
		{"GOROOT's go.env", nil, nil, home + "/go/pkg/mod/cache/download",
			"file://" + home + "/go/pkg/mod/cache/download,https://goroot.example/"},
		{"the user's go env file", nil, map[string]string{userEnv: "GOPROXY=https://user.example/\nGOMODCACHE=" + home + "/mods\n"}, home + "/mods/cache/download",
			"file://" + home + "/mods/cache/download,https://user.example/"},
		{"the environment", []string{"GOPROXY=off", "GOPATH=" + home + "/gp:/other"}, map[string]string{userEnv: "GOPROXY=https://user.example/\n"}, home + "/gp/pkg/mod/cache/download",
			"file://" + home + "/gp/pkg/mod/cache/download,off"},
		{"GOENV", []string{"GOENV=" + home + "/goenv"}, map[string]string{home + "/goenv": "GOMODCACHE=" + home + "/a,b|c\n"}, home + "/a,b|c/cache/download",
			"file://" + home + "/a%2Cb%7Cc/cache/download,https://goroot.example/"},
		{"the tree's own", []string{"GOMODCACHE=" + c.Root + "/go-mod"}, nil, c.Root + "/go-mod/cache/download", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(home, ".config"))
			for p, s := range tc.files {
				write(p, s)
			}
			if tc.dl != "" {
				mkdir(tc.dl)
			}
			got, _ := lookupIn(c.Env(append(slices.Clone(base), tc.env...)), "GOPROXY")
			if got != tc.want {
				t.Errorf("GOPROXY=%q, want %q", got, tc.want)
			}
			if tc.dl != "" {
				os.RemoveAll(tc.dl)
			}
		})
	}
}

// Trim removes the largest of the tree's caches until they are under
// three quarters of the bound; it empties read-only directories and never
// follows a link out.
func TestTrim(t *testing.T) {
	home := t.TempDir()
	c := &Cache{Root: filepath.Join(home, Name)}
	write := func(p string, n int) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(c.Root, "go-mod", "m@v1", "big"), 600<<10)
	write(filepath.Join(c.Root, "npm", "a"), 300<<10)
	write(filepath.Join(c.Root, "xdg", "pip", "b"), 100<<10)
	// Go's module cache: read-only directories.
	os.Chmod(filepath.Join(c.Root, "go-mod", "m@v1"), 0o555)
	// A link out of the caches, to the person's files.
	outside := filepath.Join(home, "outside")
	write(filepath.Join(outside, "keep"), 800<<10)
	if err := os.Symlink(outside, filepath.Join(c.Root, "npm", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(c.Root, "zlink")); err != nil {
		t.Fatal(err)
	}

	got, err := c.Trim(2 << 20)
	if err != nil || len(got.Removed) != 0 || got.Size < 1000<<10 || got.Size > 1100<<10 {
		t.Fatalf("under the bound: %+v %v (the link's target counted?)", got, err)
	}
	got, err = c.Trim(900 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(c.Root, "go-mod")}; !slices.Equal(got.Removed, want) {
		t.Errorf("over 900 KiB: removed %q, want %q", got.Removed, want)
	}
	got, err = c.Trim(400 << 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(c.Root, "npm")}; !slices.Equal(got.Removed, want) {
		t.Errorf("over 400 KiB: removed %q, want %q", got.Removed, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the link's target went: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(c.Root, "xdg", "pip", "b")); err != nil {
		t.Errorf("the smallest cache went too: %v", err)
	}

	// Once a day: the stamp's time says when.
	stamp := filepath.Join(home, "state", "agent-shim", "tree-cache.trimmed")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	write(filepath.Join(c.Root, "go-build", "x"), 900<<10)
	for _, tc := range []struct {
		at   time.Time
		done bool
	}{{now, true}, {now.Add(time.Hour), false}, {now.Add(25 * time.Hour), true}} {
		_, done, err := c.TrimDaily(stamp, 1<<30, tc.at)
		if err != nil || done != tc.done {
			t.Errorf("TrimDaily at %v: done %v (%v), want %v", tc.at, done, err, tc.done)
		}
	}
	// A stamp that cannot be written (a line under the layer that runs
	// agent-shim) trims nothing, and is no error.
	notDir := filepath.Join(home, "file")
	write(notDir, 1)
	if _, done, err := c.TrimDaily(filepath.Join(notDir, "stamp"), 1, now); done || err != nil {
		t.Errorf("TrimDaily with a stamp it cannot make: done %v, %v", done, err)
	}
}
