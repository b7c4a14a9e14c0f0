package shellparse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zshTests are read as zsh runs them (ParseShell(in, "zsh")): what only
// zsh evaluates is unknown or followed, never data.
var zshTests = []struct {
	in   string
	want []string
}{
	{"ls *(e:'rm -rf /':)", []string{"ls *(e:'rm -rf /':) !zsh reads (e:'rm -rf /':) as glob qualifiers, which can run commands"}},
	{"echo *(+f)", []string{"echo *(+f) !zsh reads (+f) as glob qualifiers, which can run commands"}},
	{"ls **/*.go(.)", []string{"ls **/*.go(.) !zsh reads (.) as glob qualifiers, which can run commands"}},
	{"echo ${(e)x}", []string{"echo ?${(e)x} !zsh expansion flags (e) on x"}},
	{"echo ${(P)ref}", []string{"echo ?${(P)ref} !zsh expansion flags (P) on ref"}},
	{"echo $~pat", []string{"echo ?$~pat !$~pat makes its value a glob, qualifiers included"}},
	{"cat =(rm -rf /)", []string{"<( ) › rm -rf /", "cat ?=(rm -rf /)"}},
	{"=rm -rf /", []string{"rm -rf /"}},
	{"noglob rm -rf /", []string{"noglob › rm -rf /"}},
	{"nocorrect git push -f", []string{"nocorrect › git push -f"}},
	{"repeat 3 git push -f", []string{"repeat › git push -f"}},
	{"ZDOTDIR=/tmp/x zsh -c ls", []string{"ZDOTDIR=/tmp/x zsh -c ls !sets ZDOTDIR: zsh runs its startup files from it", "zsh -c › ls"}},
	{"bash -c 'echo *(e:x:)'", []string{"bash -c › echo *(e:x:)"}},
	{"git status && ls -la", []string{"git status", "ls -la"}},
}

func TestZsh(t *testing.T) {
	for _, shell := range []string{"zsh", "/usr/bin/zsh"} {
		for _, tc := range zshTests {
			t.Logf("input: %q (%s)", tc.in, shell)
			s, err := ParseShell(tc.in, shell)
			if err != nil {
				t.Errorf("unexpected error: %v", err)
				continue
			}
			if diff := cmp.Diff(tc.want, summary(s.Commands)); diff != "" {
				t.Errorf("%q: commands mismatch (-want +got):\n%s", tc.in, diff)
			}
		}
	}
	// A zsh script inside a bash line is read as zsh.
	s, err := Parse(`zsh -c 'ls *(e:"rm -rf /":)'`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`zsh -c › ls *(e:"rm -rf /":) !zsh reads (e:"rm -rf /":) as glob qualifiers, which can run commands`}
	if diff := cmp.Diff(want, summary(s.Commands)); diff != "" {
		t.Errorf("zsh -c in bash (-want +got):\n%s", diff)
	}
	// Other shells are bash.
	for _, shell := range []string{"", "bash", "/bin/sh", "dash"} {
		s, err := ParseShell("ls *(e:x:)", shell)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(s.Commands); len(got) != 1 || got[0] != "ls *(e:x:)" {
			t.Errorf("ParseShell(%q): %q", shell, got)
		}
	}
}
