package matcher

import (
	"github.com/agent-shim/agent-shim/shellparse"
	"path"
	"slices"
	"strings"
	"testing"
)

// factPolicy is referencePolicy2 (the second corpus's) with a few rules
// more, for the tests of program facts.
func factPolicy() *Policy {
	p := referencePolicy2()
	for _, l := range []string{"sed", "awk", "gawk", "man", "ssh", "rsync", "cipd help", "git help", "ffx log dump",
		"git checkout", "git switch", "git worktree", "tar", "npm", "cargo", "zip", "scp", "mytool", "ninja", "bazel", "touch"} {
		p.Add(Allow, l, Source{Category: "read_only"})
	}
	for _, l := range []string{"git checkout --force", "git switch --force", "git worktree remove --force",
		"git commit --force", "rm -rf ~", "rm -rf ~/.ssh"} {
		p.Add(Deny, l, Source{Category: "never_allow"})
	}
	p.SetHome("/home/me")
	return p
}

// factTests are the classes of issue 15 the program table closes, each
// with its bypass spellings; want is exact, and fact (when set) must be
// named by the verdict that made the line stricter.
var factTests = []struct {
	in   string
	want Decision
	fact string
}{
	// Options whose value is a command line: a visible deny is a deny.
	{"git ls-remote --upload-pack='git push -f origin main; false' .", Deny, "--upload-pack"},
	{"git ls-remote --upload-pack 'rm -rf /' .", Deny, "--upload-pack"},
	{"git ls-remote -u 'rm -rf /' .", Deny, "-u"},
	{"git ls-remote '-urm -rf /' .", Deny, "-u"},
	{"git ls-remote --upload-p='rm -rf /' .", Deny, ""},
	{"git-ls-remote --upload-pack='rm -rf /' .", Deny, ""},
	{"/usr/bin/git -C x ls-remote --upload-pack='sh -c \"rm -rf /\"' .", Deny, ""},
	{"git ls-remote --upload-pack=/tmp/x .", Ask, "--upload-pack"},
	{"git ls-remote --upload-pack=\"$X\" .", Ask, ""},
	{"git ls-remote origin", Allow, ""},
	{"git fetch --upload-pack='rm -rf /'", Deny, ""},
	{"git push --receive-pack='rm -rf /'", Deny, ""},
	{"git push --exec='git reset --hard'", Deny, ""},
	{"git grep -O'rm -rf /' x", Deny, "-O"},
	{"git grep --open-files-in-pager='rm -rf /' x", Deny, ""},
	{"git grep -O x", Ask, "-O"},
	{"git grep -n -e O x", Allow, ""},
	{"git difftool -x 'rm -rf /'", Deny, ""},
	{"git rebase -x 'git push -f' main", Deny, ""},
	{"tar -tf x.tar --checkpoint-action=exec='rm -rf /'", Deny, "--checkpoint-action"},
	{"tar -tf x.tar --checkpoint-action=EXEC='rm -rf /'", Deny, ""},
	{"tar -tf x.tar --checkpoint-action=dot", Allow, ""},
	{"tar -tf x.tar --to-command='rm -rf /'", Deny, ""},
	{"tar -tf x.tar -F 'rm -rf /'", Deny, ""},
	{"tar -tf x.tar -I /tmp/x", Ask, "-I"},
	{"tar -tf x.tar -I/tmp/x", Ask, ""},
	{"tar -tf x.tar --use-compress-program=/tmp/x", Ask, ""},
	{"tar -tf x.tar --use-compress=/tmp/x", Ask, ""},
	{"tar -tf x.tar", Allow, ""},
	{"tar xf x.tar", Ask, "--extract"},
	{"tar -xf x.tar", Ask, ""},
	{"tar --extract -f x.tar", Ask, ""},
	{"rsync -e 'rm -rf /' a b:", Deny, ""},
	{"rsync --rsh='rm -rf /' a b:", Deny, ""},
	{"rsync --rsync-path='rm -rf /' a b:", Deny, ""},
	// rsync writes its destination: a write, as `> b` is, which the
	// gate lets the level allow inside the checkout (see decideLocal).
	{"rsync -a a b", Ask, "targets last"},
	{"ssh -o ProxyCommand='rm -rf /' host", Deny, ""},
	{"ssh -oProxyCommand='rm -rf /' host", Deny, ""},
	{"ssh -o 'proxycommand rm -rf /' host", Deny, ""},
	{"ssh -o LocalCommand=/tmp/x host", Ask, ""},
	{"ssh -o ConnectTimeout=5 host ls", Allow, ""},
	{"scp -S /tmp/x a b:", Ask, ""},
	{"man -P 'rm -rf /' ls", Deny, "-P"},
	{"man --pager='rm -rf /' ls", Deny, ""},
	{"man -H'rm -rf /' ls", Deny, ""},
	// A command line written out is decided as what it is.
	{"man -Pcat ls", Allow, ""},
	{"man -P 'sed -i s/a/b/ f' ls", Ask, ""},
	{"man -P most ls", Default, "-P"},
	{"man -P /tmp/x ls", Ask, ""},
	{"man ls", Allow, ""},
	{"less '+!rm -rf /' f", Deny, "+!"},
	{"less '+|arm -rf /' f", Deny, ""},
	{"less +G f", Allow, ""},
	{"LESSOPEN='|rm -rf / %s' less f", Deny, ""},
	{"LESSOPEN='||/tmp/x %s' less f", Ask, ""},
	{"less -o /tmp/log f", Ask, ""},
	{"go test -exec='rm -rf /' ./...", Deny, "-exec"},
	{"go test --exec 'rm -rf /' ./...", Deny, ""},
	{"go build -toolexec=/tmp/x ./...", Ask, "-toolexec"},
	{"go vet -vettool=/tmp/x ./...", Ask, "-vettool"},
	{"go build -ldflags='-s -extld=/tmp/x' ./...", Ask, "-ldflags"},
	{"go build -ldflags='-s -w' ./...", Allow, ""},
	{"go test -run TestX -count=1 ./...", Allow, ""},
	{"make SHELL=/tmp/x", Ask, "SHELL"},
	{"make MAKESHELL=/tmp/x all", Ask, ""},
	{"make CFLAGS='$(shell rm -rf /)'", Deny, ""},
	{"make CFLAGS='${shell git push -f}'", Deny, ""},
	{"make CFLAGS=-O2", Allow, ""},
	{"make -f - <<< 'all:; rm -rf /'", Ask, "-f"},
	{"make --file=/dev/stdin < x", Ask, ""},
	{"make -f build.mk", Allow, ""},
	{"make --eval='all:; rm -rf /'", Ask, "--eval"},
	{"make -j8 -C sub all", Allow, ""},
	{"npm test --script-shell=/tmp/x", Ask, "--script-shell"},
	{"npm --script-shell /tmp/x test", Ask, ""},
	{"npm test", Allow, ""},
	{"cargo test --config 'target.x.runner=\"/tmp/x\"'", Ask, "--config"},
	{"cargo --config x test", Ask, ""},
	{"cargo test", Allow, ""},
	{"rg --pre /tmp/x foo", Ask, "--pre"},
	{"rg --pre=/tmp/x foo", Ask, ""},
	{"rg -e --pre foo", Allow, ""},
	{"sort --compress-program=/tmp/x f", Ask, ""},
	{"zip -TT 'rm -rf /' a.zip f", Deny, ""},
	{"zip --unzip-command='rm -rf /' a.zip f", Deny, ""},
	{"ninja -t msvc -- /tmp/x", Ask, ""},
	{"ninja -C out", Allow, ""},
	{"bazel test --run_under='rm -rf /' //x", Deny, ""},
	{"git diff --ext-diff", Ask, "--ext-diff"},
	{"git log -p --textconv", Ask, ""},
	{"git log -p --text", Allow, ""},
	{"git diff --text", Allow, ""},
	{"git diff --textc", Ask, ""},
	{"git show --textconv HEAD:f", Ask, ""},
	{"git -c core.pager='rm -rf /' log", Deny, "core.pager"},
	{"git -c pager.log='sh -c \"rm -rf /\"' log", Deny, ""},
	{"git -c Core.SSHCommand='rm -rf /' ls-remote x", Deny, ""},
	{"git -c diff.x.textconv='rm -rf /' diff", Deny, ""},
	{"git -c core.pager=less log", Allow, ""},
	{"git -c core.pager=most log", Default, "core.pager"},
	{"git -c 'core.pager=less -R' log", Allow, ""},
	{"git -c core.pager=/tmp/x log", Ask, ""},
	{"git -c credential.helper=store fetch", Default, ""},
	{"git -c credential.helper='!rm -rf /' fetch", Deny, ""},
	{"git -c credential.helper='/tmp/x' ls-remote", Ask, ""},
	{"git -c safe.directory='*' status", Ask, ""},
	{"git -c color.ui=never status", Allow, ""},
	{"git -c alias.p='push --force' p origin main", Deny, ""},
	{"git -c alias.p='push' p --force", Deny, ""},
	{"git -c Alias.St='!rm -rf /' st", Deny, ""},
	{"git -c alias.st=status st", Ask, ""},

	{"GIT_PAGER='rm -rf /' git log", Deny, ""},
	{"GIT_PAGER=cat git log", Allow, ""},
	{"GIT_EDITOR=true git log", Allow, ""},
	{"PAGER=\"$P\" git log", Ask, ""},
	{"LESS='+!rm -rf /' git log", Deny, ""},
	{"LESS=-R git log", Allow, ""},
	{"export PAGER='rm -rf /'; man ls", Deny, ""},
	{"GIT_SSH_COMMAND='sh -c \"rm -rf /\"' git ls-remote x", Deny, ""},
	{"EDITOR=/tmp/x git log", Ask, ""},
	{"PAGER=less git log", Allow, ""},
	{"MANPAGER='rm -rf /' man ls", Deny, ""},
	{"git filter-branch --tree-filter 'rm -rf /' HEAD", Deny, ""},
	{"git filter-branch --msg-filter=/tmp/x HEAD", Ask, ""},
	{"git send-email --sendmail-cmd='rm -rf /' x.patch", Deny, ""},
	{"git send-email --smtp-server=/tmp/x x.patch", Ask, ""},
	{"git clone --template=/tmp/t https://x", Ask, "--template"},
	{"git init --template /tmp/t", Ask, ""},
	{"git diff-tree --ext-diff HEAD", Ask, ""},
	{"git blame --textconv f", Ask, ""},
	{"make -C /tmp/x", Ask, "-C"},
	{"make --directory=../other all", Ask, ""},
	{"make CC=/tmp/x", Ask, ""},
	{"make .SHELLFLAGS='-c rm -rf /'", Ask, ""},
	{"npm test --userconfig=/tmp/rc", Ask, "--userconfig"},
	{"bazel test --bazelrc=/tmp/rc //x", Ask, ""},
	{"ssh -o Include=/tmp/cfg host ls", Ask, ""},
	{"scp -F /tmp/cfg a b:", Ask, ""},

	{"tar -tf x.tar -I 'rm -rf /'", Deny, ""},

	// Ordinary lines keep their verdict (the second corpus's policy).
	{"go list -m all", Allow, ""},
	{"go list -f '{{.Dir}}' ./...", Allow, ""},
	{"go test -race -count=1 -run 'TestX|TestY' ./...", Allow, ""},
	{"go test -cover ./...", Allow, ""},
	{"go vet ./...", Allow, ""},
	{"tar -tzf x.tgz", Allow, ""},
	{"tar tf x.tar", Allow, ""},
	{"tar -tvf x.tar", Allow, ""},
	{"tar --list --file=x.tar", Allow, ""},
	{"less -R +G README.md", Allow, ""},
	{"less +/pattern README.md", Allow, ""},
	{"sort -t: -k3 -n /etc/group", Allow, ""},
	{"find . -type f -name '*.go' | head -n 20", Allow, ""},
	{"cd src && make test", Allow, ""},
	{"set -euo pipefail; make -C sub test", Allow, ""},
	{"make -f Makefile.dev all", Allow, ""},
	{"git grep -e foo -- '*.go'", Allow, ""},
	{"git show --stat HEAD", Allow, ""},
	{"git -C repo status", Allow, ""},
	{"npm test -- --watch", Allow, ""},
	{"cargo test -- --nocapture", Allow, ""},
	{"Rscript analysis.R", Allow, ""},
	{"date -u", Allow, ""},
	{"file README.md", Allow, ""},
	{"date; git status", Allow, ""},

	// Options and operands that write.
	{"go test ./... -args -test.coverprofile=/home/x/.bashrc", Ask, "-test.coverprofile"},
	{"go test -test.outputdir=/tmp ./...", Ask, ""},
	{"go build -pkgdir=/tmp/p ./...", Ask, ""},
	{"cargo test --target-dir /tmp/t", Ask, ""},
	{"cargo test --target-dir=target/x", Allow, ""},
	{"tar -tf x.tar -g /home/x/.bashrc", Ask, ""},
	{"tar -tf x.tar --volno-file=/home/x/.bashrc", Ask, ""},
	{"sed -i s/a/b/ f", Ask, ""}, // the ask rule `sed -i`
	{"sed s/a/b/ f", Allow, ""},
	{"find . -name x -print", Allow, ""},
	{"find ~ -delete", Ask, "-delete"},
	{"find . --delete", Ask, ""},
	{"find . -name x -fprint /tmp/y", Ask, ""},
	{"find . -name -delete -print", Allow, ""},
	{"find . -iname -delete", Allow, ""},
	{"go build -o bin/app ./cmd/app", Allow, ""},
	{"go build -o /home/x/.bashrc ./cmd/app", Ask, "-o"},
	{"go build -o=../../x ./cmd/app", Ask, ""},
	{"go build -o ~/bin/x ./cmd/app", Ask, ""},
	{"go test -coverprofile=/home/x/.bashrc ./...", Ask, "-coverprofile"},
	{"go test -coverprofile=c.out ./...", Allow, ""},
	{"go test -cpuprofile /tmp/cpu ./...", Ask, ""},
	{"go test -o=/tmp/t ./...", Ask, ""},
	{"tar -tf x.tar --index-file=/home/x/.bashrc", Ask, "--index-file"},
	{"date -s 2020-01-01", Ask, "-s"},
	{"date --set=2020-01-01", Ask, ""},
	{"date -d yesterday +%F", Allow, ""},
	{"date +%Y-%m-%d", Allow, ""},
	{"file -C -m /tmp/magic", Ask, "-C"},
	{"file --compile", Ask, ""},
	{"file x", Allow, ""},
	{"sort -o /etc/passwd f", Ask, "-o"},
	{"sort -uo out f", Ask, ""},
	{"sort --output=out f", Ask, ""},
	{"sort -t, -k2 f", Allow, ""},
	{"git log --output=/tmp/x", Ask, ""},
	{"git log --pretty --output=/tmp/x", Ask, ""},
	{"git log --format --output /tmp/x", Ask, ""},
	{"make -j --eval='all:; rm -rf /'", Ask, ""},
	{"make -j8 all", Allow, ""},
	{"git log -S --output x", Allow, ""},

	// awk: a program that provably runs nothing and writes nothing is
	// allowed by an awk rule; anything else is not.
	{"awk '{print $1}' f", Allow, ""},
	{"awk -F: '$3 > 100 {print $1}' /etc/passwd", Allow, ""},
	{"awk '{system(\"rm -rf /\")}' f", Deny, ""},
	{"awk '{system(\"id\")}' f", Ask, "awk"},
	{"awk 'BEGIN { system ( \"git push --force\" ) }'", Deny, ""},
	{"awk '{ print | \"rm -rf /\" }' f", Deny, ""},
	{"awk 'BEGIN { \"rm -rf /\" | getline x }'", Deny, ""},
	{"gawk 'BEGIN { print |& \"rm -rf /\" }'", Deny, ""},
	{"awk '{ print \"rm -rf /\" }' f", Allow, ""},
	{"awk 'BEGIN { system (\"id\") }'", Ask, ""},
	{"awk '{print > \"/tmp/x\"}' f", Ask, ""},
	{"awk '{printf \"%s\", $1 >> \"x\"}' f", Ask, ""},
	{"awk '{print | \"sh\"}' f", Ask, ""},
	{"awk 'BEGIN { \"date\" | getline d }'", Ask, ""},
	{"awk 'BEGIN { f=\"system\"; @f(\"id\") }'", Ask, ""},
	{"awk -f prog.awk f", Ask, "-f"},
	{"awk \"$P\" f", Ask, ""},
	{"gawk -i inplace '{print}' f", Ask, ""},
	{"gawk -e 'BEGIN{system(\"id\")}'", Ask, ""},
	{"gawk '$1 || $2' f", Allow, ""},

	// sed's e command runs a command line.
	{"sed 'e rm -rf /' f", Deny, ""},
	{"sed '1e git push --force' f", Deny, ""},
	{"sed '1e id' f", Ask, ""},

	// Interpreters' inline code.
	{"Rscript -e 'system(\"id\")'", Ask, "-e"},
	{"python3.12 -c 1", Default, ""},

	// A value-taking short option with its value attached is not a flag
	// cluster; a flag before a subcommand word does not stop an allow
	// rule when the table knows it.
	{"git checkout -bfeature", Allow, ""},
	{"git checkout -b feature", Allow, ""},
	{"git checkout -f main", Deny, ""},
	{"git checkout -qf main", Deny, ""},
	{"git switch -cfeature", Allow, ""},
	{"git switch -fc x", Deny, ""},
	{"git commit -Cfixup", Ask, ""},
	{"git commit -m -f", Ask, ""},
	{"ffx log --filter foo dump", Allow, ""},
	{"ffx --target x log --filter foo dump", Allow, ""},
	{"ffx log --unknown foo dump", Default, ""},
	{"git worktree remove -f x", Deny, ""},
	{"git worktree remove --force x", Deny, ""},
	{"git worktree list", Allow, ""},

	// Program spellings: deny and ask rules hold, allow rules do not.
	{"'C:/Program Files/Git/bin/git.exe' push --force", Deny, ""},
	{`'C:\Git\bin\git.exe' push -f`, Deny, ""},
	{"git.EXE push -f", Deny, ""},
	{"git.exe status", Ask, ""},
	{"/usr/bin/r[m] -rf /", Deny, ""},
	{"/bin/?? -la", Ask, ""},

	// The home directory spelled out.
	{"rm -rf /home/me", Deny, ""},
	{"rm -rf /home/me/", Deny, ""},
	{"rm -rf /home", Deny, ""},
	{"rm -rf /root", Deny, ""},
	{"rm -rf /home/me/.ssh", Deny, ""},
	{"rm -rf /home/me/*", Deny, ""},
	{"cd /home && rm -rf me", Deny, ""},
	{"rm -rf /home/me/src/x", Ask, ""},
	{"rm -rf /home/other", Ask, ""},

	// Harmless builtins keep an allowed line allowed.
	{"true && git status", Allow, ""},
	{"git status || exit 1", Allow, ""},
	{"git status; exit", Allow, ""},
	{"set -euo pipefail; git status", Allow, ""},
	{"set -e; set +u; git status", Allow, ""},
	{": ; git status", Allow, ""},
	{"cd /tmp && ls", Allow, ""},
	{"cd && pwd && ls", Allow, ""},
	// git (or make) in another directory runs that repository's
	// configuration: outside the project (no scope here), a person decides.
	{"cd /tmp && git status", Ask, ""},
	{"cd && pwd && git status", Ask, ""},
	{"pushd sub && git status && popd", Allow, ""},
	{"pushd \"$D\" && git status", Ask, ""},
	{"pushd \"$D\" && ls", Default, ""},
	{"false || git status", Allow, ""},
	{"f() { shift; return 0; }; git status", Allow, ""},
	{"set -x; git status", Default, ""},
	{"set -o vi; git status", Default, ""},
	{"set -- a b; git status", Default, ""},
	{"cd \"$D\" && git status", Ask, ""},
	{"exit $(rm -rf /)", Deny, ""},
	{"true() { rm -rf /; }; true", Deny, ""},

	// Help tools.
	{"cipd help", Allow, ""},
	{"cipd --help", Allow, ""},
	{"cipd ensure --help", Allow, ""},
	{"cipd ensure -root x", Default, ""},
	{"git gc --help", Allow, ""},
	{"git help push", Allow, ""},
}

func TestFacts(t *testing.T) {
	p := factPolicy()
	seen := map[string]bool{}
	for _, tc := range factTests {
		if seen[tc.in] {
			t.Fatalf("duplicate test %q", tc.in)
		}
		seen[tc.in] = true
		res := p.Decide(tc.in)
		if res.Decision != tc.want {
			t.Errorf("%q: got %v, want %v\n%s", tc.in, res.Decision, tc.want, explainText(res))
			continue
		}
		if tc.fact == "" {
			continue
		}
		found := false
		for _, v := range res.Commands {
			if strings.Contains(v.Fact, tc.fact) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no verdict names a fact with %q\n%s", tc.in, tc.fact, explainText(res))
		}
	}
}

// TestSedInPlace: sed -i is not allowed by a plain sed rule in any
// spelling, and is allowed by a rule that names it, on a file of the
// working directory (as the gate decides at local-changes).
func TestSedInPlace(t *testing.T) {
	plain := New()
	plain.Add(Allow, "sed", Source{})
	named := New()
	named.Add(Allow, "sed", Source{})
	named.Add(Allow, "sed -i", Source{})
	for _, tc := range []struct {
		in           string
		plain, named Decision
	}{
		{"sed -i s/a/b/ f", Ask, Allow},
		{"sed -i.bak s/a/b/ f", Ask, Allow},
		{"sed -ibak s/a/b/ f", Ask, Allow},
		{"sed --in-place s/a/b/ f", Ask, Allow},
		{"sed --in-place=.bak s/a/b/ f", Ask, Allow},
		{"sed --in-pl s/a/b/ f", Ask, Ask},
		{"sed -ni p f", Ask, Allow},
		{"sed -n -i p f", Ask, Allow},
		{"sed -e s/a/b/ -i f", Ask, Allow},
		{"sed -s -i s/a/b/ f", Ask, Allow},
		{"sed -E -i s/a/b/ f", Ask, Allow},
		{"sed -i -- s/a/b/ f", Ask, Allow},
		{"sed s/a/b/ f", Allow, Allow},
		{"sed -n p f", Allow, Allow},
		{"sed -e s/i/x/ f", Allow, Allow},
		{"sed -i 's/a/b/w /etc/x' f", Ask, Ask},
	} {
		if got := decideLocal(plain, tc.in).Decision; got != tc.plain {
			t.Errorf("rule `sed`: %q: got %v, want %v", tc.in, got, tc.plain)
		}
		if got := decideLocal(named, tc.in).Decision; got != tc.named {
			t.Errorf("rules `sed`, `sed -i`: %q: got %v, want %v", tc.in, got, tc.named)
		}
		// Outside the working directory the file is a write the
		// level does not cover, whatever the rule names.
		if out := strings.Replace(tc.in, " f", " /etc/f", 1); out != tc.in && tc.named == Allow && strings.Contains(tc.in, "-i") {
			if got := decideLocal(named, out).Decision; got != Ask {
				t.Errorf("rules `sed`, `sed -i`: %q: got %v, want ask", out, got)
			}
		}
	}
}

// decideLocal decides a line as the gate does inside a checkout at the
// local-changes level: writes to relative paths that stay in the working
// directory (redirections, and the files package shellparse says a
// program writes) are the level's to allow, not asked about.
func decideLocal(p *Policy, line string) *Result {
	s, err := shellparse.Parse(line)
	if err != nil {
		return p.Decide(line)
	}
	for _, c := range s.Commands {
		var keep []shellparse.Redirect
		for _, r := range c.Redirs {
			// Hidden files and directories (.git, .agents) stay
			// writes: the gate protects the policy's own paths.
			first, _, _ := strings.Cut(path.Clean(r.Target.Text), "/")
			if r.Kind == shellparse.Write && r.Target.Static && inTree(r.Target.Text) && !c.Moved &&
				!slices.Contains([]string{".git", ".agents", ".claude", ".gemini", ".codex"}, first) {
				continue
			}
			keep = append(keep, r)
		}
		c.Redirs = keep
	}
	return p.decideScript(s, 0)
}
