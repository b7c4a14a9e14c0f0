package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

// FuzzCheckBash: deciding never panics, and in yolo mode under a policy
// that allows everything, a line that runs `rm -rf /` behind any prefix
// is never allowed.
func FuzzCheckBash(f *testing.F) {
	for _, s := range []string{"git status", "sudo env", "bash -c", "x=$(", "eval", "FOO=1", "xargs", "{", "if true; then", "'", `\`} {
		f.Add(s)
	}
	p := matcher.New()
	p.Add(matcher.Allow, "command(*)", matcher.Source{})
	f.Fuzz(func(t *testing.T, prefix string) {
		g := New(Options{Mode: ModeYolo, Level: LevelFullAccess, Policy: p})
		_ = g.DecideBash(prefix)
		line := prefix + " ; rm -rf /"
		err := g.CheckBash(context.Background(), line)
		if err == nil && !strings.ContainsAny(prefix, "#'\"\\`$<(){}\n") {
			t.Fatalf("%q allowed", line)
		}
		if err != nil && !errors.Is(err, ErrDenied) && !errors.Is(err, ErrNeedsApproval) {
			t.Fatalf("%q: unexpected error %v", line, err)
		}
	})
}
