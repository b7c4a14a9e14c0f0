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

func TestIsOurCommand(t *testing.T) {
	tests := []struct {
		cmd, agent string
		want       bool
	}{
		{"/home/u/go/bin/agent-shim hook claude-code", "claude-code", true},
		{"agent-shim hook claude-code --config /x.json", "claude-code", true},
		{"'/opt/my tools/agent-shim' hook codex", "codex", true},
		{`"/opt/tools/agent-shim" hook gemini-cli`, "gemini-cli", true},
		{"/home/u/go/bin/agent-shim hook claude-code", "codex", false},
		{"/home/u/go/bin/agent-shim explain x", "claude-code", false},
		{"my-linter hook claude-code", "claude-code", false},
		{"agent-shim hook claude-code; rm -rf ~", "claude-code", false},
		{"X=1 agent-shim hook claude-code", "claude-code", false},
		{"$HOME/bin/agent-shim hook claude-code", "claude-code", false},
		{"agent-shim hook", "claude-code", false},
		{"", "claude-code", false},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.cmd)
		if got := isOurCommand(tc.cmd, tc.agent); got != tc.want {
			t.Errorf("isOurCommand(%q, %s) = %v, want %v", tc.cmd, tc.agent, got, tc.want)
		}
	}
}

func TestHookCommand(t *testing.T) {
	for _, tc := range []struct{ exe, cfg, want string }{
		{"/home/u/go/bin/agent-shim", "", "/home/u/go/bin/agent-shim hook claude-code"},
		{"/opt/my tools/agent-shim", "/etc/a b.json", "'/opt/my tools/agent-shim' hook claude-code --config '/etc/a b.json'"},
	} {
		got := hookCommand(tc.exe, "claude-code", tc.cfg)
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
		if !isOurCommand(got, "claude-code") {
			t.Errorf("%q is not recognised as ours", got)
		}
	}
}

// codexHooksOff reads only the [features] table; "hooks" wins over its
// deprecated alias "codex_hooks".
func TestCodexHooksOff(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"[features]\nhooks = true\n", ""},
		{"[features]\nhooks = false\n", "[features] hooks = false"},
		{"[features]\ncodex_hooks = false\n", "[features] codex_hooks = false"},
		{"[features]\nhooks = true\ncodex_hooks = false\n", ""},
		{"[features]\ncodex_hooks = true\nhooks = false # off\n", "[features] hooks = false"},
		{"[other]\nhooks = false\n[features]\nx = 1\n", ""},
		{"[features]\nx = 1\n[other]\nhooks = false\n", ""},
		{"hooks = false\n", ""},
	}
	for _, tc := range tests {
		if got := codexHooksOff([]byte(tc.in)); got != tc.want {
			t.Errorf("codexHooksOff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
