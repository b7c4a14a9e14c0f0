package supervisor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSpellings(t *testing.T) {
	tests := []struct {
		in   Exec
		want [][]string
	}{
		{
			in:   Exec{Path: "/usr/bin/git", Real: "/usr/bin/git", Argv: []string{"git", "status"}},
			want: [][]string{{"/usr/bin/git", "status"}},
		},
		{ // a link named for a subcommand
			in:   Exec{Path: "/w/git-push", Real: "/usr/bin/git", Argv: []string{"git-push", "--force"}},
			want: [][]string{{"/w/git-push", "--force"}, {"/usr/bin/git", "--force"}},
		},
		{ // argv[0] chosen by the caller
			in:   Exec{Path: "/usr/bin/busybox", Real: "/usr/bin/busybox", Argv: []string{"rm", "-rf", "/"}},
			want: [][]string{{"/usr/bin/busybox", "-rf", "/"}, {"rm", "-rf", "/"}},
		},
		{ // a renamed link and a false argv[0]
			in:   Exec{Path: "/w/t2", Real: "/usr/bin/touch", Argv: []string{"harmless", "x"}},
			want: [][]string{{"/w/t2", "x"}, {"/usr/bin/touch", "x"}, {"harmless", "x"}},
		},
		{ // a script: the interpreter's argv too
			in:   Exec{Path: "/w/s", Real: "/w/s", Argv: []string{"./s", "a"}, Interp: []string{"/usr/bin/env", "bash"}},
			want: [][]string{{"/w/s", "a"}, {"/usr/bin/env", "bash", "/w/s", "a"}},
		},
		{ // a script whose interpreter is a copy of git: git push
			in: Exec{Path: "/w/push", Real: "/w/push", Argv: []string{"push", "--force"}, Interp: []string{"/w/g"},
				Interpreted: &Exec{Path: "/w/g", Real: "/w/g", Argv: []string{"/w/g", "push", "--force"}, Copies: []string{"/usr/bin/git"}}},
			want: [][]string{{"/w/push", "--force"}, {"/w/g", "/w/push", "--force"}, {"/w/g", "push", "--force"}, {"/usr/bin/git", "push", "--force"}},
		},
		{ // the loader runs git
			in: Exec{Path: "/lib64/ld.so", Real: "/lib64/ld.so", Argv: []string{"ld.so", "/usr/bin/git", "push"},
				Loaded: &Exec{Path: "/usr/bin/git", Real: "/usr/bin/git", Argv: []string{"/usr/bin/git", "push"}}},
			want: [][]string{{"/lib64/ld.so", "/usr/bin/git", "push"}, {"/usr/bin/git", "push"}},
		},
		{ // no argv at all
			in:   Exec{Path: "/bin/true", Real: "/usr/bin/true"},
			want: [][]string{{"/bin/true"}},
		},
		{ // an empty argv[0]
			in:   Exec{Path: "/bin/true", Real: "/usr/bin/true", Argv: []string{""}},
			want: [][]string{{"/bin/true"}},
		},
	}
	for _, tc := range tests {
		t.Logf("input: %+v", tc.in)
		if diff := cmp.Diff(tc.want, tc.in.Spellings()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func TestExecString(t *testing.T) {
	x := Exec{Path: "/usr/bin/git", Argv: []string{"git", "commit", "-m", "it's done", ""}}
	if got, want := x.String(), `/usr/bin/git commit -m 'it'\''s done' ''`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestStatusExitCode(t *testing.T) {
	for _, tc := range []struct {
		in   Status
		want int
	}{{Status{Code: 7}, 7}, {Status{Signal: 9}, 137}, {Status{}, 0}} {
		if got := tc.in.ExitCode(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.in, got, tc.want)
		}
	}
}

// Available always says why, for explain and doctor.
func TestAvailableSaysWhy(t *testing.T) {
	ok, why := Available()
	if why == "" {
		t.Errorf("Available() = %v with no reason", ok)
	}
	t.Logf("available: %v (%s)", ok, why)
}
