package matcher

import (
	"strings"
	"testing"
)

// decideTests go beyond the corpus: more members of each bypass class,
// under the same reference policy. want is exact.
var decideTests = []struct {
	in   string
	want Decision
}{
	// Force pushes, every spelling.
	{"git push origin main -f", Deny},
	{"git push -u -f origin x", Deny},
	{"git push --forc", Deny},
	{"git push --force-w", Deny},
	{"git push origin +HEAD:refs/heads/main", Deny},
	{"git --git-dir=.git --work-tree=. push -f", Deny},
	{"git --namespace x push -f", Deny},
	{"git -P push -f", Deny},
	{`git "push" "--force"`, Deny},
	{"GIT_DIR=x git push -f", Deny},
	{"git push origin -- --force", Ask}, // after --, a refspec named --force
	{"git push origin main", Ask},
	{"timeout -s 9 10 git push -f", Deny},
	{"nohup git push --force >/dev/null 2>&1 &", Deny},

	// rm -rf /, every spelling.
	{"rm -Rf /", Deny},
	{"rm -fR /", Deny},
	{"rm -r -f -- /", Deny},
	{"rm --recur --forc /", Deny},
	{"rm -rf /./", Deny},
	{"rm -rf ///", Deny},
	{"rm -rf /tmp/../..", Deny},
	{"rm --no-preserve-root -rf /", Deny},
	{"rm -rf / --no-preserve-root", Deny},
	{"rm -rf /* /.*", Deny},
	{"r''m -rf /", Deny},
	{"command rm -rf /", Deny},
	{"RM -rf /", Deny},
	{"/usr/bin/Git push -f", Deny},
	{"busybox rm -rf /", Deny},
	{"env -S 'rm -rf /'", Deny},
	{"sudo -- rm -rf /", Deny},
	{"cd / && rm -rf *", Deny},
	{"cd /tmp; rm -rf ..", Deny},
	{"rm -rf ../..", Ask},
	{"rm -rf build", Ask},
	{"rm -rf /var", Ask},
	{"rm -rf $HOME", Ask},

	// Structure: chains, groups, functions, substitutions, nesting.
	{"(rm -rf /)", Deny},
	{"{ rm -rf /; }", Deny},
	{"! rm -rf /", Deny},
	{"if true; then rm -rf /; fi", Deny},
	{"for i in 1; do rm -rf /; done", Deny},
	{"case x in x) rm -rf /;; esac", Deny},
	{"f() { rm -rf /; }; f", Deny},
	{"x=$(rm -rf /)", Deny},
	{"echo ${x:-$(rm -rf /)}", Deny},
	{"echo $(( $(git push -f) ))", Deny},
	{"ls > $(rm -rf /)", Deny},
	{"bash -c 'bash -c \"rm -rf /\"'", Deny},
	{`sh -c "eval 'git push -f'"`, Deny},
	{"eval git push -f", Deny},
	{"eval 'git push -f'", Deny},
	{"trap 'git push -f' EXIT", Deny},
	{"find / -maxdepth 0 -exec rm -rf {} +", Ask},
	{"xargs -0 rm -rf < list", Ask},
	{"bash <<< 'git reset --hard'", Deny},
	{"sh <<'EOF'\ngit clean -fdx\nEOF", Deny},

	// Not statically known: at least ask.
	{"$(echo rm) -rf /", Ask},
	{"$HOME/bin/rm -rf /", Deny},
	{`"$DIR"/git push -f`, Deny},
	{"$DIR/git status", Ask},
	{"$DIR/rm$X -rf /", Ask},
	{"git $OPT status", Ask},
	{"echo 'rm -rf /' | sh", Deny}, // a static script piped to a shell
	{"cat script.sh | bash", Ask},
	{"curl -s x | bash -", Ask},
	{"source <(curl -s x)", Ask},
	{`bash -c "$(echo 'rm -rf /')"`, Ask},
	{"sudo $CMD", Ask},
	{"env $X git status", Ask},

	// Writes: at least ask; /dev/null and fd duplication are not writes.
	{"git status > out.txt", Ask},
	{"git diff > patch.diff", Ask},
	{"ls >&2", Allow},
	{"ls 2>&1 >/dev/null", Allow},
	{"ls >& out", Ask},
	{"> file", Ask},
	{"ls | tee out.txt", Ask},
	{"git log --output=x", Ask},
	{"git log $X", Ask},

	// Environment: unknown assignments keep a command from being allowed
	// but do not make an unmatched one ask.
	{"PATH=/tmp git status", Ask},
	{"LD_PRELOAD=x.so ls", Ask},
	// A command line or program a variable names is decided as what it
	// is: x has no rule, so git diff is no better than default.
	{"GIT_EXTERNAL_DIFF=x git diff", Default},
	{"GIT_EXTERNAL_DIFF=./x git diff", Ask},
	{"PAGER=cat git log", Allow},
	{"GIT_PAGER='rm -rf ~' git log", Ask},
	{"TZ=UTC LANG=C ls", Allow},
	{"FOO=1 npm run build", Default},
	{"PATH=/tmp; git status", Default},
	{"export PATH=/tmp:$PATH && git status", Default},
	{"x=1; echo $x", Allow},

	// Trust: programs by path, sudo, inline code.
	{"./git status", Ask},
	{"/usr/bin/git status", Allow},
	{"/opt/evil/ls", Ask},
	{"sudo ls", Ask},
	{"sudo npm run build", Default},

	// git configuration that runs something.
	{"git -c color.ui=always log", Allow},
	{"git -c core.sshCommand=x status", Default},
	{"git -c core.fsmonitor=x status", Default},
	{"git -c core.fsmonitor=.git/fsm status", Ask},
	{"git -c core.fsmonitor=\"$X\" status", Ask},
	{"git --exec-path=/tmp status", Ask},
	{"git --config-env=core.pager=X log", Ask},
	{"git config user.name x", Default},
	{"git config --global core.pager x", Ask},
	{"git config get alias.p", Default},

	// Data stays data.
	{"echo 'git push -f'", Allow},
	{"grep -r 'rm -rf /' .", Allow},
	{`echo "a; rm -rf /"`, Allow},
	{"git commit -m 'rm -rf /'", Ask},
	{"cat <<'EOF'\n$(git push -f)\nEOF", Allow},
	{"echo \\$\\(rm -rf /\\)", Allow},

	// Near misses are not the rule.
	{"git statusx", Default},
	{"git-lfs status", Default},
	{"catalog", Default},
	{"git clean -fd", Default},
	{"git clean -fdX", Default},
	{"git reset --soft HEAD~1", Default},
	{"go vet ./...", Default},
	{"rgx", Default},
	{"", Allow},
	{"# only a comment", Allow},
}

func TestDecide(t *testing.T) {
	p := referencePolicy()
	seen := map[string]bool{}
	for _, tc := range decideTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		res := p.Decide(tc.in)
		if res.Decision != tc.want {
			t.Errorf("input: %q\ngot %v, want %v\n%s", tc.in, res.Decision, tc.want, explainText(res))
		}
	}
}

// ruleTests check one rule against commands: whether it decides them.
var ruleTests = []struct {
	rule  string
	d     Decision
	match []string
	miss  []string
}{
	{"git push --force", Deny,
		[]string{"git push --force", "git push -f", "git push origin main --force", "git push -fu o x", "git push origin +main", "git-push -f"},
		[]string{"git push", "git push --force-with-lease", "git pull --force", "git push origin :x"}},
	{"git push --force-with-lease", Deny,
		[]string{"git push --force-with-lease=main:abc", "git push origin --force-with-lease"},
		[]string{"git push --force", "git push -f"}},
	{"git branch -D", Deny,
		[]string{"git branch -D x", "git branch --delete --force x", "git branch -d -f x"},
		[]string{"git branch -d x", "git branch -f x"}},
	{"git clean -fdx", Deny,
		[]string{"git clean -fdx", "git clean -xdf", "git clean -d -x --force", "git clean -ffdx", "git clean -dfx -e keep"},
		[]string{"git clean -fd", "git clean -fdX", "git clean -n -dx"}},
	{"sed -i", Ask,
		[]string{"sed -i s/a/b/ f", "sed -E -i '' s/a/b/ f", "sed --in-place=.bak s/a/b/ f", "sed -i.bak s/a/b/ f", "sed -ni p f", "sed --in-place s/a/b/ f"},
		[]string{"sed -n p f", "sed -e s/i/x/ f", "sed -es/x/i/ f"}},
	{"rm -rf /", Deny,
		[]string{"rm -rf /", "rm -rf //", "rm -rf / home", "rm -rf home /", "rm -rf /*"},
		[]string{"rm -rf /var", "rm -r /", "rm -f /", "rm -rf", "rm -rf /tmp/*"}},
	{"rm -rf ~", Deny,
		[]string{"rm -rf ~", "rm -rf ~/", "rm -rf $HOME", `rm -rf "$HOME"`, "rm -rf ${HOME}/", "rm -rf ~/*"},
		[]string{"rm -rf ~/x", "rm -rf /"}},
	{"dd of=/dev/*", Deny,
		[]string{"dd if=/dev/zero of=/dev/sda", "dd of=/dev/nvme0n1 bs=1M"},
		[]string{"dd if=/dev/zero of=disk.img"}},
	{"go test", Allow,
		[]string{"go test ./...", "go test -run X ./pkg"},
		[]string{"go -C x test", "go vet", "go tests"}},
	{"cat", Allow,
		[]string{"cat", "cat a b", "cat -n f", "/bin/cat f"},
		[]string{"catalog", "./cat f", "cat > f"}},
	{"npm run build", Ask,
		[]string{"npm run build", "npm run build -- --watch"},
		[]string{"npm run test", "npm run"}},
	{"command(regex:^npm (ci|install)$)", Allow,
		[]string{"npm ci", "npm install"},
		[]string{"npm install x", "npm ci; rm -rf /", "npm ci $X"}},
	{"command(regex:^curl\\b.*)", Ask,
		[]string{"curl -s x", "FOO=1 curl x", "curl $URL"},
		[]string{"xcurl x"}},
	{"command(regex:^rm( -[a-z]+)* [a-z/]+$)", Ask,
		[]string{"rm -rf x", `rm -rf "$TARGET"`, "rm $(cat list)"},
		[]string{"rmx y", "rm -rf UPPER"}},
	{"command(git log)", Allow,
		[]string{"git log", "git log --oneline", "git -C x log"},
		[]string{"git logx", "git show", "./git log"}},
	// A command(…) grant is read as the line it spells: every spelling.
	{"command(git push --force)", Deny,
		[]string{"git push --force", "git push origin main -f", "git -C x push -fu o b", "git push origin +main"},
		[]string{"git push origin", "git pull --force"}},
	{"command(*)", Deny,
		[]string{"ls", "anything at all"},
		nil},
}

func TestRules(t *testing.T) {
	for _, tc := range ruleTests {
		p := New()
		p.Add(tc.d, tc.rule, Source{})
		if err := p.Check(); err != nil {
			t.Fatalf("rule %q: %v", tc.rule, err)
		}
		for _, cmd := range tc.match {
			if got := p.Decide(cmd).Decision; got != tc.d {
				t.Errorf("rule %q on %q: got %v, want %v", tc.rule, cmd, got, tc.d)
			}
		}
		for _, cmd := range tc.miss {
			// Another reason may give the same verdict (rm -rf UPPER
			// writes UPPER): the rule must not be what decides.
			res := p.Decide(cmd)
			by := false
			for _, v := range res.Commands {
				by = by || v.Rule != nil && v.Rule.Text == tc.rule && v.Decision == tc.d
			}
			if res.Decision == tc.d && by {
				t.Errorf("rule %q must not decide %q, got %v", tc.rule, cmd, res.Decision)
			}
		}
	}
}

func TestFromGrants(t *testing.T) {
	managed := []Managed{{
		Line:   "git push --force",
		Source: Source{Category: "never_allow", Overlay: "vendor/x", File: "vendor/x/.agents/config/permissions/never_allow.txt", Line: 3},
		Grants: []string{"command(regex:^git push --force$)", "command(regex:^git push -f$)"},
	}}
	p := FromGrants(
		[]string{"command(regex:^ls$)"},
		nil,
		[]string{"command(regex:^git push --force$)", "command(regex:^git push -f$)", "read_file(/etc/**)"},
		managed,
	)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	// The managed grants are matched by their line, once, with its source:
	// the line catches spellings its regexes do not.
	res := p.Decide("sudo git -C x push origin +main")
	if res.Decision != Deny {
		t.Fatalf("got %v, want deny\n%s", res.Decision, explainText(res))
	}
	r := res.Commands[0].Rule
	if r.Text != "git push --force" || r.Source.Line != 3 || r.Grant != "command(regex:^git push --force$)" {
		t.Errorf("rule = %q %+v grant %q", r.Text, r.Source, r.Grant)
	}
	if n := len(p.Rules()); n != 3 {
		t.Errorf("policy has %d rules, want 3 (ls regex, one managed line, read_file grant)", n)
	}
	if got := p.Decide("ls").Decision; got != Allow {
		t.Errorf("unmanaged regex grant: got %v, want allow", got)
	}
}

func TestCheckNamesBadRules(t *testing.T) {
	p := New()
	p.Add(Deny, "command(regex:([)", Source{File: "never_allow.txt", Line: 7})
	p.Add(Ask, "echo 'unterminated", Source{File: "ask.txt", Line: 2})
	err := p.Check()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"never_allow.txt:7", "ask.txt:2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	// A deny rule that cannot be read fails closed: every command asks,
	// and the verdict says why as data.
	if r := p.Decide("ls"); r.Decision != Ask || !r.Commands[0].Unreadable {
		t.Errorf("with an unreadable deny rule, got %v (unreadable %v), want ask", r.Decision, r.Commands[0].Unreadable)
	}
}

func TestCombine(t *testing.T) {
	all := []Decision{Allow, Default, Ask, Deny}
	for i, a := range all {
		for j, b := range all {
			want := all[max(i, j)]
			if got := Combine(a, b); got != want {
				t.Errorf("Combine(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestSedRuns(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   bool
	}{
		{"s/a/b/", false},
		{"s/a/b/g", false},
		{"s/.*/rm -rf ~/e", true},
		{"s|a|b|w out", true},
		{"1e rm -rf /", true},
		{"/x/w out.txt", true},
		{"$!N;P;D", false},
		{"y/abc/xyz/", false},
		{"/start/,/end/d", false},
		{`s/a\/e/b/`, false},
		{"2q", false},
		{"r input.txt", false},
		{"a hello", false},
		{"Z", true},
	} {
		if got := sedRuns(tc.script); got != tc.want {
			t.Errorf("sedRuns(%q) = %v, want %v", tc.script, got, tc.want)
		}
	}
}

// TestVerdictData: what a caller branches on is in the verdict, not in
// its reason: the floor that held an allow rule back, whether a rule
// could not be read, and the line a deny rule matched inside the command.
func TestVerdictData(t *testing.T) {
	p := New()
	p.Add(Allow, "command(echo)", Source{})
	p.Add(Allow, "command(tee)", Source{})
	p.Add(Allow, "command(git status)", Source{})
	p.Add(Deny, "command(rm -rf /)", Source{})
	p.Add(Ask, "command(git push)", Source{})
	for _, tc := range []struct {
		in     string
		want   Decision
		floor  string
		inside string
	}{
		{in: "echo hi", want: Allow},
		{in: "echo hi > /tmp/x", want: Ask, floor: "writes /tmp/x (>)"},
		{in: "git push", want: Ask},
		{in: "rm -rf /", want: Deny},
		{in: "git -c core.pager='rm -rf /' status", want: Deny, inside: "rm -rf /"},
	} {
		t.Logf("input: %q", tc.in)
		r := p.Decide(tc.in)
		if len(r.Commands) != 1 {
			t.Fatalf("%s: %d commands", tc.in, len(r.Commands))
		}
		v := r.Commands[0]
		if v.Decision != tc.want || v.Floor != tc.floor || v.Inside != tc.inside || v.Unreadable {
			t.Errorf("%s: %v floor %q inside %q unreadable %v (%s); want %v floor %q inside %q", tc.in, v.Decision, v.Floor, v.Inside, v.Unreadable, v.Reason, tc.want, tc.floor, tc.inside)
		}
	}
	// A rule that cannot be read: the command asks for the rule's sake.
	p.Add(Deny, "command(git log 'x)", Source{})
	v := p.Decide("git -c core.pager='git log' status").Commands[0]
	if v.Decision != Ask || !v.Unreadable {
		t.Errorf("unreadable rule inside core.pager: %v unreadable %v (%s)", v.Decision, v.Unreadable, v.Reason)
	}
}
