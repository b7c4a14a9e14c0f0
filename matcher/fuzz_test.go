package matcher

import (
	"testing"

	"github.com/agent-shim/agent-shim/shellparse"
)

// hostile are words a value not known statically might turn out to be:
// each rule word of the reference policy, and the shapes that defeat naive
// matchers.
var hostile = []string{"--force", "-f", "-rf", "/", "push", "reset", "--hard", "clean", "-fdx",
	"-i", "--force-with-lease", "+main", "~", "--output=/etc/passwd", "alias.x=!sh",
	"--upload-pack=rm -rf /", "-urm -rf /", "core.pager=rm -rf /", "--checkpoint-action=exec=rm -rf /"}

// FuzzDecide never panics, and never allows a command it cannot read: an
// allowed line has no unknown program, no unreadable script and no write,
// and no word it could not read would have made it a deny.
func FuzzDecide(f *testing.F) {
	for _, row := range readCorpus(f, "testdata/adversarial.tsv") {
		f.Add(row.command)
	}
	for _, name := range []string{"adversarial-2.tsv", "adversarial-3.tsv", "adversarial-5.tsv", "traffic.tsv"} {
		for _, row := range readCorpus(f, "testdata/"+name) {
			f.Add(row.command)
		}
	}
	for _, tc := range decideTests {
		f.Add(tc.in)
	}
	for _, tc := range factTests {
		f.Add(tc.in)
	}
	p := referencePolicy()
	f.Fuzz(func(t *testing.T, line string) {
		// Cut every input to 4 KiB. What looked like a stall (minutes
		// with 0 execs/s) was Go minimising each new interesting input,
		// up to 60 s apiece, with a decision per step: long inputs made
		// each step slow. Nothing interesting needs a longer line, and
		// cutting (not skipping) keeps every input tested.
		if len(line) > 4<<10 {
			line = line[:4<<10]
		}
		res := p.Decide(line)
		if res.Err != nil && res.Decision != Ask && res.Decision != Deny {
			t.Fatalf("%q does not parse but got %v", line, res.Decision)
		}
		if res.Decision != Allow {
			return
		}
		for _, v := range res.Commands {
			cmd := v.Command
			if cmd.Unknown != "" {
				t.Fatalf("%q allowed with an unknown command: %s", line, cmd.Unknown)
			}
			if len(cmd.Args) > 0 && !cmd.Args[0].Static {
				t.Fatalf("%q allowed with a program not known statically: %s", line, cmd.Args[0].Text)
			}
			for _, r := range cmd.Redirs {
				if r.Kind == shellparse.Write {
					t.Fatalf("%q allowed with a write to %s", line, r.Target.Text)
				}
			}
			if len(cmd.Args) > 64 {
				continue // keep each input cheap, so the fuzzer explores
			}
			for i, w := range cmd.Args {
				if w.Static {
					continue
				}
				for _, h := range hostile {
					cp := *cmd
					cp.Args = append([]shellparse.Word(nil), cmd.Args...)
					cp.Args[i] = shellparse.Word{Text: h, Static: true}
					if d := p.DecideCommand(&cp).Decision; d == Deny {
						t.Fatalf("%q allowed, but word %d (%s) as %q would deny it", line, i, w.Text, h)
					}
				}
			}
		}
	})
}
