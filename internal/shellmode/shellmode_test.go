package shellmode

import (
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		in      []string
		want    string
		wantErr string
	}{
		{in: []string{"-c", "git status"}, want: "git status"},
		{in: []string{"-lc", "git status"}, want: "git status"},
		{in: []string{"-cl", "git status"}, want: "git status"},
		{in: []string{"-e", "-o", "pipefail", "-c", "a | b"}, want: "a | b"},
		{in: []string{"-euo", "pipefail", "-c", "x"}, want: "x"},
		{in: []string{"-i", "-c", "x", "arg0", "a1"}, want: "x"},
		{in: []string{"+o", "histexpand", "-c", "x"}, want: "x"},
		{in: []string{"-O", "extglob", "-c", "x"}, want: "x"},
		{in: []string{"--login", "--noprofile", "-c", "x"}, want: "x"},
		{in: []string{"--rcfile", "f", "-c", "x"}, want: "x"},
		{in: []string{"-c", "-x", "x"}, want: "x"}, // options go on after -c
		{in: []string{"-c", "--", "x"}, want: "x"},
		{in: []string{"-c", "-"}, wantErr: "-c needs a command line"},
		{in: []string{"-c"}, wantErr: "-c needs a command line"},
		{in: []string{"-l", "script.sh"}, wantErr: "only command lines given with -c"},
		{in: []string{"-s"}, wantErr: "only command lines given with -c"},
		{in: []string{"+c", "x"}, wantErr: "only command lines given with -c"},
		{in: []string{"-o"}, wantErr: "-o needs an option name"},
		{in: []string{"--rcfile"}, wantErr: "--rcfile needs a file"},
		{in: []string{"--bogus", "-c", "x"}, wantErr: "unknown shell option --bogus"},
		{in: []string{"-c1", "x"}, wantErr: "unknown shell option -c1"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		key := strings.Join(tc.in, "\x00")
		if seen[key] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[key] = true
		t.Logf("input: %q", tc.in)
		got, err := Command(append([]string{"agent-shim"}, tc.in...))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got %q, %v; want error %q", got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
	}
}

func TestIsArgv(t *testing.T) {
	for in, want := range map[string]bool{
		"-c": true, "-lc": true, "+o": true, "--login": true, "-e": true,
		"-h": false, "--help": false, "hook": false, "explain": false, "-": false, "": false,
	} {
		if got := IsArgv(in); got != want {
			t.Errorf("IsArgv(%q) = %v, want %v", in, got, want)
		}
	}
}
