package manifest

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/matcher"
)

// runners are programs that run other programs or code given to them: never
// in a category some profile allows without asking for the ordinary work.
// find is not one: the command its -exec runs is decided as its own, and
// its grants leave -exec, -execdir, -ok and -okdir out (TestGrants).
var runners = map[string]bool{
	"env": true, "xargs": true, "sudo": true, "doas": true, "su": true, "eval": true, "exec": true,
	"command": true, "builtin": true, "nohup": true, "nice": true, "timeout": true, "time": true,
	"stdbuf": true, "setsid": true, "ionice": true, "chroot": true, "busybox": true, "script": true,
	"watch": true, "parallel": true, "flock": true, "strace": true, "unshare": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true,
	"csh": true, "tcsh": true, "python": true, "python2": true, "python3": true, "perl": true,
	"ruby": true, "node": true, "nodejs": true, "deno": true, "bun": true, "php": true, "lua": true,
	"tclsh": true, "wish": true, "Rscript": true, "nawk": true, "expect": true, "osascript": true, "npx": true, "vim": true, "vi": true,
	"emacs": true, "less": true, "more": true, "ssh": true, "tmux": true, "screen": true,
}

// readCode are programs that run code given to them whose code the engine
// reads (the built-in table's script facts: sed's e and w, awk's system(),
// pipes and redirections; man's pager): allowed as readers, since what
// their code runs or writes is decided as what it is
// (TestDefaultsReadCode).
var readCode = []string{"sed", "awk", "gawk", "mawk", "man"}

// allowCategories are the categories some profile puts in allow that must
// not hold a runner (batch_execution and cache_destruction are allowed only
// under full-access).
var allowCategories = []string{"read_only", "local_changes", "external_changes", "device_ops"}

func TestDefaultsHoldNoRunners(t *testing.T) {
	tree, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	p := newLineParser()
	checked := 0
	for _, l := range tree.Lines {
		if !slices.Contains(allowCategories, l.Category) {
			continue
		}
		if passThrough().MatchString(l.Text) {
			t.Errorf("%s:%d: pass-through grant %q in an allow category", l.File, l.Num, l.Text)
			continue
		}
		words, _, err := p.words(l.Text)
		if err != nil {
			t.Fatalf("%s:%d: %v", l.File, l.Num, err)
		}
		checked++
		prog := path.Base(words[0])
		if runners[prog] {
			t.Errorf("%s:%d: %q runs other programs", l.File, l.Num, l.Text)
		}
		// "go run", "cargo run", "npm exec" and the like are interpreters
		// too; npm run and pnpm run run the package's scripts.
		if len(words) > 1 && (words[1] == "run" && prog != "npm" && prog != "pnpm" || words[1] == "exec") {
			t.Errorf("%s:%d: %q runs code", l.File, l.Num, l.Text)
		}
	}
	if checked < 100 {
		t.Errorf("only %d lines checked", checked)
	}
	for _, p := range readCode {
		if runners[p] {
			t.Errorf("%s is both a runner and a program whose code is read", p)
		}
	}
	// The check itself catches a runner.
	for _, bad := range []string{"env", "/usr/bin/xargs", "bash", "python3"} {
		if !runners[path.Base(bad)] {
			t.Errorf("runners misses %s", bad)
		}
	}
}

// chainedTails are what an agent may append to an allowed command to run
// something else: no grant may match the result.
var chainedTails = []string{
	"; rm -rf /", ";rm -rf /", " && rm -rf /", " || rm -rf /", " & rm -rf /", " | sh", "|sh",
	" |& sh", "\nrm -rf /", "\r\nrm -rf /", " `rm -rf /`", " $(rm -rf /)", ` "$(rm -rf /)"`,
	" > /etc/passwd", " >> ~/.bashrc", " 2> /etc/x", " < /etc/shadow", " <(rm -rf /)", " >(sh)",
	" ${IFS}", " $HOME", " \\\nrm", " '\nrm -rf /'", " #\nrm -rf /",
}

// sample returns a command the rule's own grants should match: the rule's
// text itself, with words a profile test would type.
func TestDefaultGrants(t *testing.T) {
	tree, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	total, size := 0, 0
	for _, l := range tree.Lines {
		grants, err := Grants(l.Text)
		if err != nil {
			t.Fatalf("%s:%d: %v", l.File, l.Num, err)
		}
		if len(grants) == 0 {
			t.Fatalf("%s:%d: no grants for %q", l.File, l.Num, l.Text)
		}
		var res []*regexp.Regexp
		for _, g := range grants {
			total++
			size += len(g)
			if strings.Contains(g, ".*") {
				t.Errorf("%s:%d: grant holds .*: %s", l.File, l.Num, g)
			}
			if len(g) > 4096 {
				t.Errorf("%s:%d: grant of %d bytes", l.File, l.Num, len(g))
			}
			res = append(res, regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")")))
		}
		match := func(cmd string) bool {
			for _, re := range res {
				if re.MatchString(cmd) {
					return true
				}
			}
			return false
		}
		for _, cmd := range []string{l.Text, l.Text + " x", "LANG=C /usr/bin/" + l.Text} {
			if !match(cmd) {
				t.Errorf("%s:%d: %q does not match its own rule", l.File, l.Num, cmd)
			}
		}
		for _, cmd := range []string{"PATH=/tmp/x " + l.Text, "LD_PRELOAD=/tmp/x.so LANG=C " + l.Text} {
			if match(cmd) {
				t.Errorf("%s:%d: rule %q matches %q", l.File, l.Num, l.Text, cmd)
			}
		}
		for _, tail := range chainedTails {
			for _, cmd := range []string{l.Text + tail, l.Text + " x" + tail} {
				if match(cmd) {
					t.Errorf("%s:%d: rule %q matches %q", l.File, l.Num, l.Text, cmd)
				}
			}
		}
		// The rule's text never matches as a prefix of a longer program name.
		words := strings.Fields(l.Text)
		if long := words[0] + "x" + strings.TrimPrefix(l.Text, words[0]); match(long) {
			t.Errorf("%s:%d: rule %q matches %q", l.File, l.Num, l.Text, long)
		}
	}
	t.Logf("%d default lines, %d grants, %d bytes", len(tree.Lines), total, size)
}

// TestGrantsDeterministic checks equal output across calls and no duplicates.
func TestGrantsDeterministic(t *testing.T) {
	for _, line := range []string{"git push --force --no-verify -f", "git status", "sed -i", "git help", "rm -rf /"} {
		a, _ := Grants(line)
		for i := 0; i < 5; i++ {
			b, _ := Grants(line)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("Grants(%q) differs between calls", line)
			}
		}
		seen := map[string]bool{}
		for _, g := range a {
			if seen[g] {
				t.Errorf("Grants(%q) repeats %s", line, g)
			}
			seen[g] = true
		}
	}
	if g, _ := Grants("git push --force --no-verify"); len(g) != 2 {
		t.Errorf("two flags: %d grants, want 2 orders", len(g))
	}
	if g, _ := Grants("git push --force --force"); len(g) != 1 {
		t.Errorf("a repeated flag: %d grants, want 1", len(g))
	}
	for _, line := range []string{"", "   ", "# comment"} {
		if g, err := Grants(line); g != nil || err != nil {
			t.Errorf("Grants(%q) = %v, %v", line, g, err)
		}
	}
	for _, line := range []string{"a; b", "echo $x", "grep 'x", "a\x00"} {
		if g, err := Grants(line); err == nil {
			t.Errorf("Grants(%q) = %v, want an error", line, g)
		}
	}
}

// TestDefaultDenyGrants: the never_allow defaults, expanded for the deny
// list, still match with any chained tail and behind sudo.
func TestDefaultDenyGrants(t *testing.T) {
	tree, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range tree.Lines {
		if l.Category != "never_allow" {
			continue
		}
		n++
		for _, cmd := range []string{l.Text, "sudo " + l.Text, "FOO=1 " + l.Text + " x"} {
			for _, tail := range append([]string{""}, chainedTails...) {
				if !denyMatches(t, l.Text, cmd+tail) {
					t.Errorf("%s:%d: deny rule %q misses %q", l.File, l.Num, l.Text, cmd+tail)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d never_allow defaults", n)
	}
}

// TestDefaultsReadCode holds readCode to what makes it safe: under the
// grants of its read-only line, each program's ordinary use is allowed
// and none of its spellings that run or write through its code is.
func TestDefaultsReadCode(t *testing.T) {
	cases := map[string]struct{ plain, code []string }{
		"sed":  {[]string{"sed -n '15p' f.py", "sed 's/,/./g' a.dat"}, []string{"sed 'e touch x' f", "sed 's/x/y/e' f", "sed 'w /etc/x' f", "sed -f s.sed f", "sed -i s/a/b/ f", `sed "$X" f`}},
		"awk":  {[]string{"awk '{print $2}' f"}, []string{`awk 'BEGIN{system("touch x")}'`, `awk '{print | "sh"}' f`, `awk '{print > "/etc/x"}' f`, "awk -f x.awk f", `awk "$X" f`}},
		"gawk": {[]string{"gawk '{print $2}' f"}, []string{`gawk 'BEGIN{system("touch x")}'`, "gawk -i inplace '{print}' f", "gawk -e x -f y.awk"}},
		"mawk": {[]string{"mawk '{print $2}' f"}, []string{`mawk 'BEGIN{system("touch x")}'`, "mawk -f x.awk f"}},
		"man":  {[]string{"man ls"}, []string{"man -P 'touch x' ls", "MANPAGER='touch x' man ls", "man -H ls"}},
	}
	for _, prog := range readCode {
		tc, ok := cases[prog]
		if !ok {
			t.Fatalf("no cases for %s", prog)
		}
		gs, err := Grants(prog)
		if err != nil {
			t.Fatal(err)
		}
		p := matcher.FromGrants(gs, nil, nil, []matcher.Managed{{Line: prog, Grants: gs}})
		for _, c := range tc.plain {
			if d := p.Decide(c).Decision; d != matcher.Allow {
				t.Errorf("%q under %q: %v, want allow", c, prog, d)
			}
		}
		for _, c := range tc.code {
			if d := p.Decide(c).Decision; d == matcher.Allow {
				t.Errorf("%q under %q: allowed, its code runs or writes", c, prog)
			}
		}
	}
}
