package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// treeCacheRoot is the tree's cache directory of a test's rt: the
// person's cache directory is dir/xdg/cache.
func (r *rt) treeCacheRoot() string { return filepath.Join(r.dir, "xdg", "cache", "agent-shim-tree") }

// A line under the layer finds its tools' caches pointed at the tree's,
// whatever the person's environment said; the person's are left alone.
func TestRuntimeTreeCacheEnv(t *testing.T) {
	r := newRT(t, "local-changes")
	home := filepath.Join(r.dir, "home")
	pinGo(t, home)
	t.Setenv("GOCACHE", filepath.Join(r.dir, "xdg", "cache", "go-build"))
	t.Setenv("NPM_CONFIG_CACHE", filepath.Join(home, ".npm"))
	t.Setenv("CARGO_HOME", filepath.Join(home, ".cargo"))
	vars := []string{"XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE", "npm_config_cache", "NPM_CONFIG_CACHE", "CARGO_HOME", "CCACHE_DIR", "HOME"}
	var script strings.Builder
	for _, v := range vars {
		fmt.Fprintf(&script, "echo %s=${%s-unset}\n", v, v)
	}
	r.file(t, "env.sh", script.String())
	code, stdout, stderr := shellRun(context.Background(), "bash env.sh")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	root := r.treeCacheRoot()
	want := []string{
		"XDG_CACHE_HOME=" + root + "/xdg", "GOCACHE=" + root + "/go-build", "GOMODCACHE=" + root + "/go-mod",
		"npm_config_cache=" + root + "/npm", "NPM_CONFIG_CACHE=unset", "CARGO_HOME=" + root + "/cargo",
		"CCACHE_DIR=" + root + "/ccache", "HOME=" + home,
	}
	if got := strings.Split(strings.TrimSpace(stdout), "\n"); !slices.Equal(got, want) {
		t.Errorf("the tree's environment:\n got %q\nwant %q", got, want)
	}
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("the tree's cache directory: %v %v", fi, err)
	}
}

// The person's caches are read-only to the tree: a build cache entry the
// tree wrote there would run at the person's next build. The refusal is
// said in agent-shim's words, and the tree's own caches are written.
func TestRuntimePersonsCacheReadOnly(t *testing.T) {
	r := newRT(t, "local-changes")
	persons := filepath.Join(r.dir, "xdg", "cache", "go-build")
	if err := os.MkdirAll(filepath.Join(persons, "00"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", persons)
	entry := filepath.Join(persons, "00", "poisoned-d")
	// The line writes the person's build cache, by its path and through
	// a variable of its own; then its own cache, through the layer's.
	r.file(t, "poison.sh", fmt.Sprintf("echo payload > %q\nGOCACHE=%q; echo payload > \"$GOCACHE/01-d\"\necho ok > \"$XDG_CACHE_HOME/own\"\nexit 1\n", entry, persons))
	code, _, stderr := shellRun(context.Background(), "bash poison.sh")
	if code != 1 {
		t.Errorf("exit %d, want 1: %s", code, stderr)
	}
	for _, p := range []string{entry, filepath.Join(persons, "01-d")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the tree wrote %s, in the person's build cache", p)
		}
	}
	if _, err := os.Stat(filepath.Join(r.treeCacheRoot(), "xdg", "own")); err != nil {
		t.Errorf("the tree could not write its own caches: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"agent-shim: the run-time layer refused a write to " + entry + ": it is outside what a line may write (the scope " + r.proj + ", the temporary directories, the tree's caches in " + r.treeCacheRoot() + ")",
		"agent-shim: hint: " + entry + " is the person's cache, read-only to the tree",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
}

// When a line fails after the layer refused a write, agent-shim says so:
// the path, what the line may write, the config key. Through a pipe (an
// agent's) the tree's output keeps its order, and what the line leaves
// running still writes after the line.
func TestRuntimeRefusedWriteSaysSo(t *testing.T) {
	r := newRT(t, "local-changes")
	cfg := filepath.Join(r.dir, "home", ".gemini", "config", "config.json")
	made := filepath.Join(r.outside, "made")
	hint := "agent-shim: hint: to let lines write there, add " + made + " (or " + r.outside + "/...) to agentShim.pathScope.allow in " + cfg
	refused := "agent-shim: the run-time layer refused a write to " + made + ":"
	tests := []struct {
		name, line string
		pipe       bool
		said       bool
	}{
		{"mkdir", `mkdir -p "$OUTSIDE/made/deeper"`, false, true},
		{"through a pipe", `echo one; echo two >&2; (sleep 0.4; echo late >&2) & mkdir -p "$OUTSIDE/made/deeper"; sleep 0.1; exit 3`, true, true},
		{"the line succeeds", `mkdir "$OUTSIDE/made"; true`, false, false},
		// A refusal of a path the line may write is not the layer's.
		{"inside", `echo "cc: $PWD/obj.o: Permission denied" >&2; exit 1`, false, false},
		// Nor an execution it refused (EPERM, said with its rule).
		{"exec", `touch denied`, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Logf("input: %q", tc.line)
			r.file(t, "line.sh", tc.line+"\n")
			var stderr string
			if tc.pipe {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				code := run(context.Background(), []string{"agent-shim", "-c", "bash line.sh"}, strings.NewReader(""), pw, pw)
				pw.Close()
				done := make(chan []byte)
				go func() { b, _ := io.ReadAll(pr); done <- b }()
				select {
				case b := <-done:
					stderr = string(b)
				case <-time.After(10 * time.Second):
					t.Fatal("the pipe never ended")
				}
				if code != 3 {
					t.Errorf("exit %d, want 3", code)
				}
				one, two, late := strings.Index(stderr, "one\n"), strings.Index(stderr, "two\n"), strings.Index(stderr, "late\n")
				if one < 0 || two < one || late < two {
					t.Errorf("the tree's output is out of order, or what the line left running was cut off:\n%s", stderr)
				}
			} else {
				_, _, stderr = shellRun(context.Background(), "bash line.sh")
			}
			if got := strings.Contains(stderr, refused) && strings.Contains(stderr, hint); got != tc.said {
				t.Errorf("said %v, want %v:\n%s", got, tc.said, stderr)
			}
			if !tc.said && strings.Contains(stderr, "refused a write") {
				t.Errorf("a refusal that is not the layer's is reported:\n%s", stderr)
			}
			os.RemoveAll(made)
		})
	}
}

// Go modules the person has downloaded come from the person's module
// cache (read-only, through GOPROXY=file://…): here the person's GOPROXY
// is off, so nothing else could serve them. The module is extracted in
// the tree's module cache, not the person's.
func TestRuntimeGoModulesFromPersonsCache(t *testing.T) {
	r := newRT(t, "local-changes")
	home := filepath.Join(r.dir, "home")
	persons := filepath.Join(home, "go", "pkg", "mod")
	dl := filepath.Join(persons, "cache", "download", "example.com", "tiny", "@v")
	mod := "module example.com/tiny\n\ngo 1.21\n"
	src := "package tiny\n\nconst Name = \"tiny\"\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	files := map[string]string{"example.com/tiny@v1.0.0/go.mod": mod, "example.com/tiny@v1.0.0/tiny.go": src}
	for _, name := range []string{"example.com/tiny@v1.0.0/go.mod", "example.com/tiny@v1.0.0/tiny.go"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"list": "v1.0.0\n", "v1.0.0.info": `{"Version":"v1.0.0"}`, "v1.0.0.mod": mod, "v1.0.0.zip": zb.String(),
	} {
		if err := os.MkdirAll(dl, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dl, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.file(t, "go.mod", "module m\n\ngo 1.21\n\nrequire example.com/tiny v1.0.0\n")
	r.file(t, "go.sum", "example.com/tiny v1.0.0 "+hash1(files)+"\nexample.com/tiny v1.0.0/go.mod "+hash1(map[string]string{"go.mod": mod})+"\n")
	r.file(t, "main.go", "package main\n\nimport \"example.com/tiny\"\n\nfunc main() { println(tiny.Name) }\n")
	pinGo(t, home)
	t.Setenv("GOPROXY", "off")
	r.file(t, "list.sh", "go list -f '{{.Dir}}' example.com/tiny\n")
	code, stdout, stderr := shellRun(context.Background(), "bash list.sh")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if got, want := strings.TrimSpace(stdout), filepath.Join(r.treeCacheRoot(), "go-mod", "example.com", "tiny@v1.0.0"); got != want {
		t.Errorf("the module is in %s, want %s", got, want)
	}
	if _, err := os.Lstat(filepath.Join(persons, "example.com")); err == nil {
		t.Errorf("the module was extracted in the person's module cache")
	}
}

// pinGo pins the go command's settings to home, the test's: go test
// hands its GOPATH and GOENV (the real home's) to the tests.
func pinGo(t *testing.T, home string) {
	t.Setenv("GOPATH", filepath.Join(home, "go"))
	t.Setenv("GOMODCACHE", "") // GOPATH's: a GOMODCACHE of the environment the tests run in is not the home's
	t.Setenv("GOENV", filepath.Join(home, ".config", "go", "env"))
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOTOOLCHAIN", "local")
}

// hash1 is the go command's h1: hash of files (name: content).
func hash1(files map[string]string) string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256([]byte(files[n])), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}
