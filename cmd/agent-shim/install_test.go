package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMESnippets: every README block marked <!-- readme/NAME --> is
// the file readme/NAME of testdata/script/readme.txtar, which runs it.
func TestREADMESnippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "readme.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	blocks := regexp.MustCompile("(?s)<!-- (readme/[^ ]+) -->\n```[a-z]*\n(.*?)```\n").FindAllSubmatch(readme, -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d marked blocks in README.md, want at least 5", len(blocks))
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		name, text := string(b[1]), string(b[2])
		if seen[name] {
			t.Errorf("README.md marks %s twice", name)
		}
		seen[name] = true
		got, ok := files[name]
		if !ok {
			t.Errorf("README.md's %s is not in readme.txtar: no test runs it", name)
			continue
		}
		if got != text {
			t.Errorf("README.md's %s differs from readme.txtar's:\nREADME:\n%s\ntxtar:\n%s", name, text, got)
		}
	}
	for name := range files {
		if len(name) > 7 && name[:7] == "readme/" && !seen[name] {
			t.Errorf("readme.txtar's %s is not in README.md", name)
		}
	}
}
