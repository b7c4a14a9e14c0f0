package matcher

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/manifest"
)

func TestRegexKey(t *testing.T) {
	for _, tc := range []struct{ grant, want string }{
		{`command(regex:^tool1\s+(?:--verbose\s+)?sub1(?:\s+\S+)*$)`, "tool1"},
		{`command(regex:^tool$)`, "tool"},
		{`command(regex:^\s*tool(?:\s.*)?$)`, "tool"},
		{`command(regex:^(?:\S*/)?tool\s)`, "tool"},
		{`command(regex:^(tool) x)`, "tool"},
		{`command(regex:^[ \t]*(?:[A-Z_]+=\S*\s+)*(?:[A-Za-z0-9._/-]*/)?kubectl\s+get\b.*)`, "kubectl"},
		{`command(regex:^\s*(?:\\|'|")?rm(?:'|")?\s+-rf)`, "rm"},
		{`command(regex:^git status$)`, "git"},
		{`command(regex:^/usr/bin/make\s)`, "usr"}, // a token all the same: the first one bounded
		{`command(regex:(?m)^tool$)`, "tool"},
		// Global: the literal is not bounded, not required, or not literal.
		{`command(regex:tool\s)`, ""},                 // no ^: "mytool x" matches
		{`command(regex:^tool)`, ""},                  // "toolbox" matches
		{`command(regex:^tool\b)`, ""},                // "tool.sh" matches
		{`command(regex:^tool\s|^rm\s)`, ""},          // an alternation at the top
		{`command(regex:^(?:tool|rm)\s)`, ""},         // no single literal
		{`command(regex:^(?i)tool\s)`, ""},            // any case
		{`command(regex:^.*tool\s)`, ""},              // anything before
		{`command(regex:^\w*tool\s)`, ""},             // letters before
		{`command(regex:^(?:x=\S+ )?tool\s)`, "tool"}, // the prefix ends in a blank
		{`command(regex:^(?:x=\S+)?tool\s)`, ""},      // it does not
		{`command(regex:^[a-z]+\s)`, ""},
		{`command(regex:.*)`, ""},
		{`command(*)`, ""},
		{`command(git status)`, ""},
		{`read_file(/etc/hostname)`, ""},
		// Broken regexes: the word after ^, when bounded.
		{`command(regex:^tool\s+(unclosed)`, "tool"},
		{`command(regex:^\s*tool [)`, "tool"},
		{`command(regex:^tool(unclosed)`, ""},
		{`command(regex:^tool\s|(unclosed)`, ""},
		{`command(regex:(unclosed)`, ""},
		// The fast path's shapes, and what it must leave to the parser.
		{`command(regex:^tool [a|b]+$)`, "tool"},
		{`command(regex:^tool (?:a|b)$)`, "tool"},
		{`command(regex:^tool \Q|\E$)`, "tool"},
		{`command(regex:^tool [[:alpha:]|]$)`, "tool"},
		{`command(regex:^tool []|]$)`, "tool"},
		{`command(regex:^tool a|b)`, ""},
		{`command(regex:^tool\s*x)`, ""},
		{`command(regex:^tool\s?x)`, ""},
		{`command(regex:^tool\s{0,1}x)`, ""},
		{`command(regex:^tool$*)`, ""},
		{`command(regex:^tool[ \t]*x)`, ""},
		{`command(regex:^tool [ \t]*x)`, "tool"},
		{`command(regex:^tool\sa)|(b)`, ""},
		{`command(regex:^tool\s\)|x)`, ""}, // an escaped ), then a | at the top
	} {
		if got := grantKey(tc.grant); got != tc.want {
			t.Errorf("grantKey(%s) = %q, want %q", tc.grant, got, tc.want)
		}
		// The fast path, where it answers, answers alike.
		src, isRegex := strings.CutPrefix(strings.TrimSuffix(strings.TrimPrefix(tc.grant, "command("), ")"), "regex:")
		if fast, ok := fastKey(src); isRegex && ok && fast != tc.want {
			t.Errorf("fastKey(%s) = %q, want %q", src, fast, tc.want)
		}
	}
}

// indexGrants are grants of every shape: what agents-setup writes for
// some rules (allow and deny styles), and hand-written regexes, indexed or
// not.
func indexGrants(t testing.TB) []string {
	var out []string
	for _, line := range []string{"git status", "ls", "tool sub", "go test", "make"} {
		g, err := manifest.Grants(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g...)
	}
	for _, line := range []string{"rm -rf /", "git push --force", "tool danger"} {
		g, err := manifest.DenyGrants(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g...)
	}
	for _, re := range []string{
		`^tool\s+(?:--verbose\s+)?sub(?:\s+\S+)*$`, `^tool$`, `^\s*tool(?:\s.*)?$`, `^(?:\S*/)?tool\s`,
		`^x\s`, `^(?:x=\S+ )?tool\s`, `tool\s`, `^tool`, `^(?i)rm\s`, `^[a-z]+ sub$`, `^tool\s+"a b"`,
		`^env\s+A=1\s+tool`, `^A=1 tool\s`, `(?m)^rm$`, `^/usr/bin/tool\s`, `^\\tool\s`, `^'tool'\s`,
		`^tool\s+\$HOME`, `^ls\s+-la?$`, `^git\s+-C\s+\S+\s+status$`,
	} {
		out = append(out, "command(regex:"+re+")")
	}
	return out
}

// indexWords build the commands of the differential test.
var indexWords = []string{"tool", "sub", "danger", "rm", "-rf", "/", "git", "status", "push", "--force",
	"ls", "-la", "make", "go", "test", "x", "A=1", "env", "/usr/bin/tool", "./tool", `\tool`, "'tool'",
	`"tool"`, "to'ol", "'a b'", "$HOME", "$(tool)", "--verbose", "TOOL", "toolbox", "mytool", "tool.sh",
	"sudo", "-C", "dir", "2>/dev/null", "|", ";", "&&", "B=$X", `"$1"`, "*", "~"}

func randomLine(r *rand.Rand) string {
	n := 1 + r.IntN(5)
	words := make([]string, n)
	for i := range words {
		words[i] = indexWords[r.IntN(len(indexWords))]
	}
	return strings.Join(words, " ")
}

// twinPolicies builds the same policy indexed and not.
func twinPolicies(allow, ask, deny []string) (indexed, plain *Policy) {
	indexed = FromGrants(allow, ask, deny, nil)
	plain = &Policy{byProg: map[string][]*Rule{}, noIndex: true}
	for _, l := range []struct {
		d Decision
		g []string
	}{{Deny, deny}, {Ask, ask}, {Allow, allow}} {
		for _, g := range l.g {
			plain.add(&Rule{Text: g, Decision: l.d})
		}
	}
	return indexed, plain
}

// sameDecisions fails unless the two policies decide line alike, command
// by command, with the same rule and reason.
func sameDecisions(t *testing.T, indexed, plain *Policy, line string) {
	t.Helper()
	a, b := indexed.Decide(line), plain.Decide(line)
	if a.Decision != b.Decision || a.Reason != b.Reason || len(a.Commands) != len(b.Commands) {
		t.Fatalf("%q: indexed %v (%s), unindexed %v (%s)", line, a.Decision, a.Reason, b.Decision, b.Reason)
	}
	for i := range a.Commands {
		if a.Commands[i].Rule != nil && b.Commands[i].Rule != nil && a.Commands[i].Rule.Text != b.Commands[i].Rule.Text ||
			(a.Commands[i].Rule == nil) != (b.Commands[i].Rule == nil) {
			t.Fatalf("%q: command %d decided by another rule", line, i)
		}
	}
}

// TestIndexAgrees: for random commands and grants, the indexed decision
// is the unindexed one.
func TestIndexAgrees(t *testing.T) {
	grants := indexGrants(t)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var lists [3][]string
		for _, g := range grants {
			if k := r.IntN(4); k < 3 {
				lists[k] = append(lists[k], g)
			}
		}
		indexed, plain := twinPolicies(lists[0], lists[1], lists[2])
		if round == 0 && len(indexed.byKey) == 0 {
			t.Fatal("nothing was indexed")
		}
		for range 50 {
			sameDecisions(t, indexed, plain, randomLine(r))
		}
	}
}

// FuzzIndex: a grant (in each list) and a command decide alike indexed and
// not.
func FuzzIndex(f *testing.F) {
	for _, g := range indexGrants(f) {
		f.Add(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"), "tool sub x")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(`^tool\s`, randomLine(r))
	}
	f.Fuzz(func(t *testing.T, re, line string) {
		if len(re) > 1024 || len(line) > 1024 {
			re, line = re[:min(len(re), 1024)], line[:min(len(line), 1024)] // keep each input cheap
		}
		g := "command(regex:" + re + ")"
		if fast, ok := fastKey(re); ok {
			if parsed, err := syntax.Parse(re, syntax.Perl); err == nil {
				if slow := regexKey(parsed.Simplify()); slow != fast {
					t.Fatalf("%s: fastKey %q, parsed %q", re, fast, slow)
				}
			}
		}
		_, broken := regexp.Compile(re)
		key := grantKey(g)
		for _, lists := range [][3][]string{{{g}, nil, nil}, {nil, {g}, nil}, {nil, nil, {g}}} {
			indexed, plain := twinPolicies(lists[0], lists[1], lists[2])
			if broken == nil || key == "" {
				sameDecisions(t, indexed, plain, line)
				continue
			}
			// A broken deny or ask grant fails closed only for the
			// commands its key names (TestBadDenyGrant): alike there.
			l := key + " " + line
			if a, b := indexed.Decide(l), plain.Decide(l); a.Decision != b.Decision {
				t.Fatalf("%q: indexed %v (%s), unindexed %v (%s)", l, a.Decision, a.Reason, b.Decision, b.Reason)
			}
		}
	})
}

// TestBadDenyGrant: a deny grant whose regex does not compile fails
// closed (at least ask, naming the grant) for the commands of the program
// its literal prefix names, and for every command when it names none.
func TestBadDenyGrant(t *testing.T) {
	allow := []string{"command(regex:^tool\\s.*$)", "command(regex:^ls(?:\\s.*)?$)"}
	for _, tc := range []struct {
		bad      string
		line     string
		want     Decision
		namesBad bool
	}{
		{`command(regex:^tool\s+(--force)`, "tool x", Ask, true},
		{`command(regex:^tool\s+(--force)`, "/usr/bin/tool x", Ask, true},
		{`command(regex:^tool\s+(--force)`, "ls -l", Allow, false},
		{`command(regex:(unclosed)`, "tool x", Ask, true},
		{`command(regex:(unclosed)`, "ls -l", Ask, true},
		{`command(regex:^tool\s|(unclosed)`, "ls -l", Ask, true},
	} {
		p := FromGrants(allow, nil, []string{tc.bad}, nil)
		res := p.Decide(tc.line)
		if res.Decision != tc.want {
			t.Errorf("%s, %q: %v (%s), want %v", tc.bad, tc.line, res.Decision, res.Reason, tc.want)
		}
		if got := strings.Contains(res.Reason, tc.bad); got != tc.namesBad {
			t.Errorf("%s, %q: reason %q names the grant: %v, want %v", tc.bad, tc.line, res.Reason, got, tc.namesBad)
		}
	}
}

// BenchmarkHandGrants decides one command under 10,000 hand regex grants
// for other programs, in a fresh policy each time (as each hook call is).
func BenchmarkHandGrants(b *testing.B) {
	var allow []string
	for i := range 10000 {
		allow = append(allow, fmt.Sprintf(`command(regex:^tool%d\s+(?:--verbose\s+)?sub%d(?:\s+\S+)*$)`, i, i))
	}
	for b.Loop() {
		p := FromGrants(allow, nil, nil, nil)
		if d := p.Decide("tool7 sub7 x").Decision; d != Allow {
			b.Fatal(d)
		}
	}
}

// TestLeadWord: for every line of the default manifests (and the test
// policies) that leadWord reads, the compiled rule's first subcommand word
// is that word, so mayLead skips only rules that cannot match.
func TestLeadWords(t *testing.T) {
	var lines []string
	for _, cat := range manifest.Categories {
		data, err := manifest.DefaultManifest(cat)
		if err != nil {
			continue // not every category has a default
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	for _, r := range referencePolicy2().Rules() {
		lines = append(lines, r.Text)
	}
	lines = append(lines, "git -C x push", "git-upload-pack x", "go help", "fx -t x build", "git push 'x'")
	read := 0
	for _, l := range lines {
		lead, lead2, ok := leadWords(l)
		r := &Rule{Text: l, Decision: Deny}
		if err := r.Check(); err != nil || !ok {
			continue
		}
		read++
		if r.c.kind != lineRule || len(r.c.sub) == 0 || r.c.sub[0] != lead || lead2 != "" && (len(r.c.sub) < 2 || r.c.sub[1] != lead2) || lead2 == "" && len(r.c.sub) > 1 {
			t.Errorf("%q: leadWords %q %q, compiled %+v", l, lead, lead2, r.c)
		}
	}
	if read < 20 {
		t.Fatalf("only %d lines read by leadWords", read)
	}
	t.Logf("%d of %d lines", read, len(lines))
}

// TestMayLeadAgrees: deciding with mayLead's skip gives the decisions of
// compiling and matching every rule of the program, on the corpus lines.
func TestMayLeadAgrees(t *testing.T) {
	for _, row := range append(readCorpus(t, "testdata/adversarial.tsv"), readCorpus(t, "testdata/adversarial-2.tsv")...) {
		fast, plain := referencePolicy2(), referencePolicy2()
		plain.noIndex = true
		a, b := fast.Decide(row.command), plain.Decide(row.command)
		if a.Decision != b.Decision || a.Reason != b.Reason {
			t.Errorf("%q: %v (%s), every rule compiled %v (%s)", row.command, a.Decision, a.Reason, b.Decision, b.Reason)
		}
	}
}
