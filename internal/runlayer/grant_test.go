package runlayer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
)

func TestPipUserInstall(t *testing.T) {
	tests := []struct {
		argv string
		want bool
	}{
		{"pip install --user x", true},
		{"pip3 install -q --user x", true},
		{"pip3.12 install x --user", true},
		{"/usr/bin/pip install --user x", true},
		{"python3 -m pip install --user x", true},
		{"python -m pip -q install --user x", true},
		{"pip install x", false},
		{"pip download --user x", false},
		{"pipx install --user x", false},
		{"python3 -m venv --user x", false},
		{"pip --user", false},
		{"pip --log f install --user x", false}, // an option's value: not read, not lent
		{"npm install --user", false},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.argv] {
			t.Fatalf("duplicate input %q", tc.argv)
		}
		seen[tc.argv] = true
		if got := pipUserInstall(strings.Fields(tc.argv)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// The grant is the approval's, and only where it exists and is not the
// home directory's holder or agent-shim's own; no approval, no grant.
func TestGrant(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	state := filepath.Join(home, ".local", "state")
	out := filepath.Join(dir, "out")
	cfg := filepath.Join(home, ".gemini", "config", "config.json")
	for _, d := range []string{state + "/agent-shim", out, filepath.Dir(cfg)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "XDG_STATE_HOME": state}
	g := gate.New(gate.Options{Scope: gate.NewScope(filepath.Join(dir, "proj")), Dir: filepath.Join(dir, "proj")})
	run := func(line string) (granted []string, privileged bool, withheld []string) {
		r := &Run{Gate: g, Config: cfg, Getenv: func(k string) string { return env[k] }}
		if line != "" {
			r.Approval = g.DecideBash(line).Approve(gate.AnswerOnce, gate.ByTerminal, dir, time.Now())
		}
		gr, w := r.grant()
		return gr.Writable, gr.Privileged, w
	}
	tests := []struct {
		line       string
		granted    []string
		privileged bool
		withheld   []string
	}{
		{line: ""},
		{line: "echo x > " + out + "/f", granted: []string{out + "/f"}},
		{line: "echo x > " + out + "/new", withheld: []string{out + "/new does not exist yet (create it first, or run the line yourself)"}},
		{line: "cp x " + dir, withheld: []string{dir + " holds the home directory"}},
		{line: "cp x /", withheld: []string{"/ holds the home directory"}},
		{line: "echo x > " + state + "/agent-shim/sessions.json", withheld: []string{state + "/agent-shim/sessions.json is agent-shim's own"}},
		{line: "cp x " + state, withheld: []string{state + " is agent-shim's own"}},
		{line: "echo '{}' > " + cfg, withheld: []string{cfg + " is agent-shim's own"}},
		{line: "sudo apt-get install -y x", privileged: true},
		{line: "pip install --user x", granted: []string{home + "/.local/lib", home + "/.local/bin"}},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.line)
		granted, privileged, withheld := run(tc.line)
		if !slices.Equal(granted, tc.granted) || privileged != tc.privileged || !slices.Equal(withheld, tc.withheld) {
			t.Errorf("%q: granted %q privileged %v withheld %q; want %q %v %q", tc.line, granted, privileged, withheld, tc.granted, tc.privileged, tc.withheld)
		}
	}
}
