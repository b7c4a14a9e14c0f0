package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// docsWithSnippets are the files whose blocks marked <!-- readme/NAME -->
// readme.txtar runs: the README and the pages of docs/.
func docsWithSnippets(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	for _, p := range append([]string{filepath.Join("..", "..", "README.md")}, pages...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// TestREADMESnippets: every block of the README and docs/ marked
// <!-- readme/NAME --> is the file readme/NAME of
// testdata/script/readme.txtar, which runs it.
func TestREADMESnippets(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "readme.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	seen := map[string]bool{}
	inREADME := 0
	for doc, data := range docsWithSnippets(t) {
		blocks := regexp.MustCompile("(?s)<!-- (readme/[^ ]+) -->\n```[a-z]*\n(.*?)```\n").FindAllSubmatch(data, -1)
		if doc == "README.md" {
			inREADME = len(blocks)
		}
		for _, b := range blocks {
			name, text := string(b[1]), string(b[2])
			if seen[name] {
				t.Errorf("%s marks %s, which another block has marked", doc, name)
			}
			seen[name] = true
			got, ok := files[name]
			if !ok {
				t.Errorf("%s's %s is not in readme.txtar: no test runs it", doc, name)
				continue
			}
			if got != text {
				t.Errorf("%s's %s differs from readme.txtar's:\n%s:\n%s\ntxtar:\n%s", doc, name, doc, text, got)
			}
		}
	}
	if inREADME < 5 {
		t.Errorf("found %d marked blocks in README.md, want at least 5", inREADME)
	}
	for name := range files {
		if strings.HasPrefix(name, "readme/") && !seen[name] {
			t.Errorf("readme.txtar's %s is in neither README.md nor docs/", name)
		}
	}
	// Every sh block of the README is run: marked for readme.txtar, or
	// the set-up itself (TestREADMESetup).
	readme := docsWithSnippets(t)["README.md"]
	all := len(regexp.MustCompile("(?m)^```sh$").FindAll(readme, -1))
	marked := len(regexp.MustCompile("(?m)^<!-- (readme/[^ ]+|setup.sh) -->\n```sh$").FindAll(readme, -1))
	if all != marked {
		t.Errorf("README.md has %d sh blocks, %d of them marked to be run", all, marked)
	}
}

// setupBlock returns the README's set-up block: the line that installs
// and runs the quick start, and the test command.
func setupBlock(t *testing.T) (install, test string) {
	t.Helper()
	readme := docsWithSnippets(t)["README.md"]
	m := regexp.MustCompile("(?s)<!-- setup.sh -->\n```sh\n(.*?)```\n").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no block marked <!-- setup.sh -->")
	}
	var cmds []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("README.md's set-up block has %d commands, want 2 (install and run, test): %q", len(cmds), cmds)
	}
	return cmds[0], cmds[1]
}

// TestREADMESetup runs the README's set-up command as it is written, from
// the repository's root, with a home of its own and a PATH of the go
// command and the system's directories only: it installs the binaries
// into that home's GOPATH, puts them on PATH, writes the policy where the
// hook and explain read it, and explains a line. Then explain with no
// --config names that policy file, which exists. (Its test command is
// the one .ci/run runs.)
func TestREADMESetup(t *testing.T) {
	install, test := setupBlock(t)
	if test != "go test -race ./..." {
		t.Errorf("the README's test command is %q; .ci/run runs go test -race ./...: keep them in step", test)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go test -race \./\.\.\.$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's tests (go test -race ./...)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	orig := func(k string) string {
		for _, kv := range origEnv {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	goEnv := func(k string) string {
		c := exec.Command(goTool, "env", k)
		c.Env = origEnv
		out, err := c.Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		return strings.TrimSpace(string(out))
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HOME=" + home, "PATH=" + filepath.Dir(goTool) + ":/usr/bin:/bin",
		// The go command's own caches stay where they are (nothing is
		// fetched: GOPROXY=off); the binaries go to the new home's GOPATH.
		"GOMODCACHE=" + goEnv("GOMODCACHE"), "GOCACHE=" + goEnv("GOCACHE"), "GOPROXY=off",
		"GOFLAGS=" + orig("GOFLAGS"), "GOTOOLCHAIN=local", "TMPDIR=" + os.TempDir(),
	}
	c := exec.Command("sh", "-ec", install)
	c.Dir = filepath.Join("..", "..")
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", install, err, out)
	}
	policy := filepath.Join(home, ".gemini", "config", "config.json")
	if _, err := os.Stat(policy); err != nil {
		t.Fatalf("the set-up left no policy where the hook reads it: %v\n%s", err, out)
	}
	// Its explain is the README's, but for the home directory and the
	// run-time layer, which depend on the machine.
	sample := regexp.MustCompile("(?s)<!-- setup.out -->\n```\n(.*?)```\n").FindSubmatch(docsWithSnippets(t)["README.md"])
	if sample == nil {
		t.Fatal("README.md has no block marked <!-- setup.out -->")
	}
	want := strings.ReplaceAll(string(sample[1]), "/home/you/", home+"/")
	layer := regexp.MustCompile(`(?m)^run-time layer: .*\n`)
	i := bytes.Index(out, []byte("policy: "))
	if i < 0 {
		t.Fatalf("the set-up's explain names no policy:\n%s", out)
	}
	if got := string(out[i:]); layer.ReplaceAllString(got, "") != layer.ReplaceAllString(want, "") {
		t.Errorf("the set-up's explain is not the README's:\n%s\nREADME:\n%s", got, want)
	}
	bin := filepath.Join(home, "go", "bin")
	for _, name := range []string{"agent-shim", "agents-setup", "agent-shim-export"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	c = exec.Command(filepath.Join(bin, "agent-shim"), "explain", "git status")
	c.Dir = dir
	c.Env = env
	out, err = c.CombinedOutput()
	if err != nil {
		t.Fatalf("explain 'git status': %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "policy: "+policy+" (mode ask, level local-changes)\n") || !strings.Contains(string(out), "\nverdict: allow") {
		t.Errorf("explain 'git status' with the set-up's policy:\n%s", out)
	}
}
