package shellparse

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTmuxDefaultShell: a new pane with the default shell runs nothing
// yet; a command for it, an environment for it (-e), a configuration
// file, or a later command set for new shells (default-command, hooks,
// setenv) is a shell command.
func TestTmuxDefaultShell(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"tmux split-window -v -t workflow", []string{"tmux split-window -v -t workflow"}},
		{"tmux new-session -d -s work", []string{"tmux new-session -d -s work"}},
		{"tmux neww -d -n logs -c /tmp", []string{"tmux neww -d -n logs -c /tmp"}},
		{"tmux -L sock new -d", []string{"tmux -L sock new -d"}},
		{"tmux split-window -v 'rm -rf /'", []string{"tmux split-window -v rm -rf / !tmux split-window runs a shell command", "tmux › rm -rf /"}},
		{"tmux split-window -v htop", []string{"tmux split-window -v htop !tmux split-window runs a shell command"}},
		{"tmux split-window -e ENV=/tmp/x -v", []string{"tmux split-window -e ENV=/tmp/x -v !tmux split-window runs a shell command"}},
		{"tmux -f /tmp/evil.conf new -d", []string{"tmux -f /tmp/evil.conf new -d !tmux new runs a shell command"}},
		{"tmux split-window -t $T", []string{"tmux split-window -t ?$T !cannot tell what tmux runs: $T is not static"}},
		{"tmux new -d \\; send-keys 'id' Enter", []string{"tmux new -d ; send-keys id Enter !tmux send-keys runs a shell command",
			"tmux new -d ; send-keys id Enter !tmux script does not parse: 1:1: `;` can only immediately follow a statement"}},
		{"tmux set -g default-command 'rm -rf /'", []string{"tmux set -g default-command rm -rf / !tmux default-command runs a shell command", "tmux › rm -rf /"}},
		{"tmux set-hook -g after-new-window 'run-shell x'", []string{"tmux set-hook -g after-new-window run-shell x !tmux set-hook runs a shell command", "tmux › run-shell x"}},
		{"tmux setenv -g ENV /tmp/x", []string{"tmux setenv -g ENV /tmp/x !tmux setenv runs a shell command"}},
	} {
		t.Logf("input: %q", tc.in)
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, summary(s.Commands)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestCodeNetwork: what interpreter code shows of reaching other machines
// is the command's Network; what reaches only this one, or shows nothing,
// is not.
func TestCodeNetwork(t *testing.T) {
	for _, tc := range []struct {
		in      string
		network bool
	}{
		{`python3 -c "import requests; requests.get('https://api.example.com')"`, true},
		{`python3 -c "import requests; requests.get('http://127.0.0.1:5000/x')"`, false},
		{`python3 -c "import requests; requests.get('http://localhost:5000@evil.com/x')"`, true},
		{`python3 -c "print('ok')"`, false},
		{`python3 -c "import urllib.parse as p; print(p.quote('a b'))"`, false},
		{`python3 -c "from datasets import load_dataset; load_dataset('org/x', split='train')"`, true},
		{`python3 -c "from datasets import load_dataset; load_dataset('./local')"`, false},
		{`python3 -c "from datasets import load_dataset; load_dataset('csv', data_files='a.csv')"`, false},
		{`python3 -c "from datasets import load_dataset; load_dataset(name)"`, false}, // opaque
		{`python3 -c "import huggingface_hub"`, true},
		{`python3 -c "import openai_helpers"`, false},
		{`python3 -c "import smtplib; smtplib.SMTP('mail')"`, true},
		{`python3 -c "x = 1  # http://example.com"`, false},
		{`python3 -c "x = '#'; u = 'http://example.com'"`, true},
		{`python3 -c "nltk.download(pkg)"`, true},
		{"python3 <<'EOF'\nfrom transformers import pipeline\nm = AutoModel.from_pretrained('gpt2')\nEOF", true},
		{`node -e "require('https').get('https://e.com')"`, true},
		{`node -e "// https://docs.example.com" -e "1"`, false},
		{`ruby -e 'require "open-uri"; URI.open("https://e.com").read'`, true},
		{`perl -e 'use LWP::Simple; get("http://e.com")'`, true},
		{`python3 script.py https://example.com`, false}, // a script's argument: its code is not shown
	} {
		t.Logf("input: %q", tc.in)
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		network := slices.ContainsFunc(s.Commands, func(c *Command) bool { return c.Network != "" })
		if network != tc.network {
			t.Errorf("%q: network %v, want %v", tc.in, network, tc.network)
		}
	}
}

// TestOpaqueAndAlias: a command computed by interpreter code is opaque
// (unknown, but not hidden by the line); python -m MODULE runs as MODULE's
// program.
func TestOpaqueAndAlias(t *testing.T) {
	s, _ := Parse(`python3 -c "import subprocess; subprocess.run(cmd)"`)
	if u := s.Commands[len(s.Commands)-1]; u.Unknown == "" || !u.Opaque {
		t.Errorf("subprocess.run(cmd): unknown %q, opaque %v", u.Unknown, u.Opaque)
	}
	s, _ = Parse(`python3 $OPTS`)
	for _, c := range s.Commands {
		if c.Opaque {
			t.Errorf("python3 $OPTS: %q is opaque, but the line hides the code", c.Source)
		}
	}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"python3 -m pytest tests -v", []string{"pytest", "tests", "-v"}},
		{"python -u -W ignore -m pip install x", []string{"pip", "install", "x"}},
		{"python3 -mpytest", []string{"pytest"}},
		{"python3 -m http.server", nil},
		{"python3 -c 'x' -m pytest", nil},
		{"python3 --foo -m pytest", nil},
		{"python3 -m $M", nil},
	} {
		t.Logf("input: %q", tc.in)
		s, _ := Parse(tc.in)
		var got []string
		for _, w := range s.Commands[0].Alias {
			got = append(got, w.Text)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: alias (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestBuilt: the paths a build or an edit in place wrote, and nothing
// else wrote on the line, are Built.
func TestBuilt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // Built of the last command
	}{
		{"g++ -o x x.c && ./x", []string{"x"}},
		{"sed -i s/a/b/ f.py && python3 f.py", []string{"f.py"}},
		{"gcc -o x x.c && cp /bin/sh x && ./x", nil},
		{"cp /bin/sh x && gcc -o x x.c && ./x", nil},
		{"echo hi > x.sh && sh x.sh", nil},
		{"cd sub && gcc -o x x.c && ./x", []string{"sub/x"}},
	} {
		t.Logf("input: %q", tc.in)
		s, _ := Parse(tc.in)
		if diff := cmp.Diff(tc.want, s.Commands[len(s.Commands)-1].Built); diff != "" {
			t.Errorf("%q: Built (-want +got):\n%s", tc.in, diff)
		}
	}
}
