package gate

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// FuzzCheckBash holds the gate to an oracle built from the parse, for
// every input (no input is skipped):
//   - deciding never panics, and Check returns nil or ErrDenied or
//     ErrNeedsApproval;
//   - a line that does not parse is Ask;
//   - under a policy that allows every command, at read-only level, a
//     line is allowed only if the program of every command it runs is
//     static and known (arguments may be data: `xargs` input) and no
//     command writes a file;
//   - in yolo mode at full access under the same policy, a line is
//     allowed only if every program is known and no write target is
//     unknown, and a line that runs a static `rm -rf /` anywhere (the
//     input followed by one on a new line, however the input ends) is
//     denied.
func FuzzCheckBash(f *testing.F) {
	for _, s := range []string{"git status", "sudo env", "bash -c", "x=$(", "eval", "FOO=1", "xargs", "{", "if true; then",
		"'", `\`, "echo x > f", "cat <<EOF", "# c", "$(rm -rf /)", "a | sh", "cd ~ && echo >> .bashrc", "ln -s ~ x; echo > x/.bashrc"} {
		f.Add(s)
	}
	p := matcher.New()
	p.Add(matcher.Allow, "command(*)", matcher.Source{})
	dir := f.TempDir()
	ro := New(Options{Mode: ModeAsk, Level: LevelReadOnly, Policy: p, Scope: NewScope(dir)})
	yolo := New(Options{Mode: ModeYolo, Level: LevelFullAccess, Policy: p, Scope: NewScope(dir)})
	f.Fuzz(func(t *testing.T, line string) {
		s, perr := shellparse.Parse(line)
		d := ro.DecideBash(line)
		if perr != nil {
			if d.Verdict != Ask {
				t.Fatalf("%q does not parse (%v) but is %v", line, perr, d.Verdict)
			}
		} else if d.Verdict == Allow {
			for _, c := range s.Commands {
				if len(c.Args) > 0 && !c.Args[0].Static || c.Unknown != "" || slices.ContainsFunc(c.Redirs, func(r shellparse.Redirect) bool { return r.Kind == shellparse.Write }) {
					t.Fatalf("%q allowed at read-only, but %q runs a program not known statically, or writes a file", line, c.Source)
				}
			}
		}
		if d := yolo.DecideBash(line); perr == nil && d.Verdict == Allow {
			for _, c := range s.Commands {
				if c.Unknown != "" || len(c.Args) > 0 && !c.Args[0].Static {
					t.Fatalf("%q allowed in yolo mode, but what %q runs is not known", line, c.Source)
				}
				for _, r := range c.Redirs {
					if r.Kind == shellparse.Write && !r.Target.Static {
						t.Fatalf("%q allowed in yolo mode, but %q writes a target not known statically", line, c.Source)
					}
				}
			}
		}

		line2 := line + "\nrm -rf /"
		err := yolo.checkBash(context.Background(), line2)
		if err != nil && !errors.Is(err, ErrDenied) && !errors.Is(err, ErrNeedsApproval) {
			t.Fatalf("%q: unexpected error %v", line2, err)
		}
		s2, perr2 := shellparse.Parse(line2)
		if perr2 != nil {
			if !errors.Is(err, ErrNeedsApproval) {
				t.Fatalf("%q does not parse (%v) but is %v", line2, perr2, err)
			}
			return
		}
		for _, c := range s2.Commands {
			if c.Static() && slices.Equal(c.Argv(), []string{"rm", "-rf", "/"}) && !errors.Is(err, ErrDenied) {
				t.Fatalf("%q runs rm -rf / but is %v", line2, err)
			}
		}
	})
}
