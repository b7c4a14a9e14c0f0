package secondline

import (
	"testing"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// TestClaudeRunners: what Claude Code 2.1.332 did with these lines under
// the second line of the adversarial-2 policy (e2e TestSecondLineAgents
// hands them to it, as claudeProbes): it reads a deny rule through the
// runners of its list and their options, a program by its path, and
// blanks as one; not through a program it does not know, a runner's
// command string (su -c, script -c) or busybox; and not in another case.
func TestClaudeRunners(t *testing.T) {
	out := Claude(Compile(Rules(policy2(t), neverAllow), programs.Builtin()))
	seen := map[string]bool{}
	for _, tc := range []struct {
		in   string
		want Decision
	}{
		{"git push --force", Deny},
		{"git  push\t--force", Deny},
		{"/usr/local/bin/git push --force", Deny},
		{"./rm -rf /", Deny},
		{"flock /tmp/l git push --force", Deny},
		{"flock -w 5 /tmp/l git push --force", Deny},
		{"nice -n 5 git push --force", Deny},
		{"GIT_DIR=x git push --force", Deny},
		{"xargs git push --force", Deny},
		{"watch git push --force", Deny},
		{"chrt 5 git push --force", Deny},
		{"taskset 1 git push --force", Deny},
		{"ltrace git push --force", Deny},
		{"time -p git push --force", Deny},
		{"sudo -u root -- rm -rf /", Deny},
		{"sudo -E env FOO=1 git reset --hard", Deny},
		{"nsenter -t 1 -m rm -rf /", Deny},
		{"strace -f -o /dev/null git reset --hard", Deny},
		{"exec -a x rm -rf /", Deny},
		{"timeout -s KILL 5 git push --force", Deny},
		{"echo git push --force", ""},
		{"foo git push --force", ""},
		{"GIT push --force", ""},
		{"script -c x git push --force", ""},
		{"busybox rm -rf /", ""},
		{"su -c x git push --force", ""},
		{"sudo foo git push --force", ""},
		{"env -i FOO=1 bar git push --force", ""},
		{"command -v rm", ""},
		{"git push origin main", Ask},
	} {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		if got := out.Decide(tc.in); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}
