//go:build network

// Tests that reach the Go module proxy and need npm (build tag network;
// .ci/run runs them, and they fail, not skip, when a tool is missing).

package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Under shell mode with the layer on, in a home outside the temporary
// directories, `go build` that fetches a module works: it goes to the
// tree's module cache, through the person's GOPROXY (proxy.golang.org);
// the person's module cache, which the tree cannot write, gains nothing.
func TestRuntimeGoBuildFetches(t *testing.T) {
	r := newRT(t, "local-changes")
	home := filepath.Join(r.dir, "home")
	pinGo(t, home)
	r.file(t, "go.mod", "module m\n\ngo 1.21\n\nrequire github.com/google/uuid v1.6.0\n")
	r.file(t, "main.go", `package main

import (
	"fmt"

	"github.com/google/uuid"
)

func main() { fmt.Println(uuid.NewSHA1(uuid.NameSpaceDNS, []byte("example.com"))) }
`)
	// -buildvcs=false: the checkout's .git is an empty directory.
	r.file(t, "build.sh", "go build -buildvcs=false -mod=mod -o app . && ./app\n")
	code, stdout, stderr := shellRun(context.Background(), "bash build.sh")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if got, want := strings.TrimSpace(stdout), "cfbff0d1-9375-5685-968c-48ce8b15ae17"; got != want {
		t.Errorf("the program printed %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(r.treeCacheRoot(), "go-mod", "github.com", "google", "uuid@v1.6.0", "uuid.go")); err != nil {
		t.Errorf("the module is not in the tree's module cache: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(home, "go")); err == nil {
		t.Errorf("the build wrote the person's GOPATH")
	}
}

// npm install of a local package works under the layer: its cache is the
// tree's, not ~/.npm. (npm install reaches other machines: the profile
// lets it, external-changes.)
func TestRuntimeNpmInstall(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("the network tests need npm: %v", err)
	}
	r := newRT(t, "external-changes")
	home := filepath.Join(r.dir, "home")
	t.Setenv("npm_config_audit", "false")
	t.Setenv("npm_config_fund", "false")
	t.Setenv("npm_config_update_notifier", "false")
	// The package, packed as npm packs it, outside the checkout.
	tgz := filepath.Join(r.outside, "hello-1.0.0.tgz")
	writeTgz(t, tgz, map[string]string{
		"package/package.json": `{"name": "hello", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     `module.exports = "hello from a local package";`,
	})
	r.file(t, "package.json", `{"name": "proj", "version": "1.0.0", "private": true}`)
	r.file(t, "install.sh", "npm install --no-save "+tgz+" && node -e 'console.log(require(\"hello\"))'\n")
	code, stdout, stderr := shellRun(context.Background(), "bash install.sh")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "hello from a local package") {
		t.Errorf("the package did not load:\n%s\n%s", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(r.treeCacheRoot(), "npm", "_cacache")); err != nil {
		t.Errorf("npm's cache is not the tree's: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(home, ".npm")); err == nil {
		t.Errorf("npm wrote the person's cache")
	}
}

// writeTgz writes a gzipped tar of files (name: content).
func writeTgz(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, name := range []string{"package/package.json", "package/index.js"} {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
