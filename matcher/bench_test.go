package matcher

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// realisticPolicy has about 400 rules over about 100 programs, shaped like
// real manifests: bare programs, subcommands, flags and paths, in all three
// lists, plus a few hand-added regex grants that apply to every program.
func realisticPolicy() *Policy {
	p := referencePolicy()
	progs := []string{"git", "go", "npm", "cargo", "make", "ls", "cat", "grep", "rg", "find",
		"sed", "awk", "curl", "wget", "docker", "kubectl", "gh", "jiri", "fx", "ffx", "python3",
		"node", "yarn", "pnpm", "rustc", "gofmt", "head", "tail", "wc", "sort", "uniq", "diff",
		"tar", "zip", "unzip", "chmod", "chown", "cp", "mv", "rm", "mkdir", "rmdir", "touch",
		"ln", "du", "df", "ps", "kill", "pkill", "systemctl", "journalctl", "ssh", "scp", "rsync"}
	for i := len(progs); i < 100; i++ {
		progs = append(progs, fmt.Sprintf("tool%d", i))
	}
	n := len(p.Rules())
	for i := 0; n < 400; i++ {
		prog := progs[i%len(progs)]
		switch i / len(progs) {
		case 0:
			p.Add(Allow, prog+" status", Source{Category: "read_only", File: "read_only.txt", Line: i + 1})
		case 1:
			p.Add(Ask, prog+" publish --all", Source{Category: "external_changes", File: "external_changes.txt", Line: i + 1})
		case 2:
			p.Add(Deny, prog+" destroy -rf /", Source{Category: "never_allow", File: "never_allow.txt", Line: i + 1})
		case 3:
			p.Add(Allow, prog+" list --json", Source{Category: "read_only", File: "read_only.txt", Line: i + 1})
		default:
			p.Add(Ask, fmt.Sprintf("%s sub%d", prog, i), Source{Category: "local_changes", File: "local_changes.txt", Line: i + 1})
		}
		n++
	}
	p.Add(Allow, `command(regex:^make -j[0-9]+$)`, Source{})
	p.Add(Deny, `command(regex:^shred\b.*)`, Source{})
	return p
}

// agentScript is about 20 KB of what agents send, the script shellparse's
// benchmark parses.
func agentScript(tb testing.TB) string {
	block, err := os.ReadFile("../shellparse/testdata/agent-script.sh")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Repeat(string(block), (20<<10)/len(block)+1)
}

func BenchmarkDecide(b *testing.B) {
	p := realisticPolicy()
	for _, bc := range []struct{ name, line string }{
		{"GitStatus", "git status"},
		{"Chain", "git add -A && git commit -m 'fix: thing' && git push origin HEAD"},
		{"Nested", `sudo -E env FOO=1 bash -c "git -C repo push --force origin main"`},
		{"Script20KB", agentScript(b)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p.Decide(bc.line) // compile the rules this line needs once
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				p.Decide(bc.line)
			}
		})
	}
}

// BenchmarkColdDecide is the hook's case: a fresh policy every time, so the
// cost includes indexing the rules and compiling those the line needs.
func BenchmarkColdDecide(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p := realisticPolicy()
		p.Decide("git status")
	}
}
