package matcher

import (
	"strings"
	"testing"
)

// round3Tests are more members of each class of adversarial-3.tsv (issue
// 23), decided by the matcher alone under the adversarial-2 policy: a write
// redirection is at least Ask here (the gate judges the scope). want is
// exact.
var round3Tests = []struct {
	in   string
	want Decision
}{
	// make: assignments of every flavour, makefiles and MAKE from
	// elsewhere.
	{"make 'X!=touch /tmp/p'", Ask},
	{"make X!='rm -rf /'", Deny},
	{"make 'X?=$(shell rm -rf /)'", Deny},
	{"make 'X+=$(shell rm -rf /)'", Deny},
	{"make 'X::=$(shell rm -rf /)'", Deny},
	{"make 'SHELL::=/tmp/x'", Ask},
	{"make 'MAKESHELL?=/tmp/x'", Ask},
	{"make MAKE=/tmp/x all", Ask},
	{"make --file=/tmp/x.mk", Ask},
	{"make -f ../x.mk", Ask},
	{"make -f~/x.mk", Ask},
	{"make --makefile /tmp/x.mk", Ask},
	{"make -f Makefile.local test", Allow},
	{"make clean RM='rm -rf /'", Deny},
	{"make RM=/tmp/x clean", Ask},
	{"RM='rm -rf /' make clean", Ask},
	{"make -I /tmp/inc", Ask},
	{"make --include-dir=../x", Ask},
	{"make CC=gcc CFLAGS=-O2", Ask},
	{"make X=1 Y:=2 test", Allow},
	// go, npm, cargo: another module, package or crate.
	{"go test -C /tmp/x ./...", Ask},
	{"go test -C=../x ./...", Ask},
	{"go test -C sub ./...", Allow},
	{"go test -overlay=o.json ./...", Ask},
	{"go test -modfile=/tmp/go.mod ./...", Ask},
	{"go test --toolexec /tmp/x ./...", Ask},
	{"go build -C ~/other ./...", Ask},
	{"npm test --prefix=/tmp/x", Ask},
	{"npm --prefix /tmp/x test", Ask},
	{"npm -C ../x test", Ask},
	{"npm test --prefix ./sub", Allow},
	{"npm test --workspace=../x", Ask},
	{"npm test -w packages/a", Allow},
	{"npm test --script-shell /tmp/x", Ask},
	{"cargo test --manifest-path=../x/Cargo.toml", Ask},
	{"cargo test --manifest-path sub/Cargo.toml", Allow},
	{"cargo test --target /tmp/t.json", Ask},
	{"cargo test --target x86_64-unknown-linux-gnu", Allow},
	{`cargo test --config 'target.x86_64-unknown-linux-gnu.runner=["rm", "-rf", "/"]'`, Deny},
	{`cargo --config "target.'cfg(all())'.runner='rm -rf /'" test`, Deny},
	{"CARGO_TARGET_AARCH64_APPLE_DARWIN_RUNNER='git push -f' cargo test", Deny},
	{"RUSTC_WRAPPER=/tmp/x cargo test", Ask},
	// GNU abbreviations down to one letter.
	{"date --se='2020-01-01'", Ask},
	{"date --s 2020-01-01", Ask},
	{"date --d=@0", Allow},
	{"sort --compress-p=/tmp/x f", Ask},
	{"rg --hostname-bin /tmp/x foo", Ask},
	{"less --lesskey-content='#env' f", Ask},
	// git configured by the environment.
	{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf /' git log", Deny},
	{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.l GIT_CONFIG_VALUE_0='!rm -rf /' git l", Deny},
	{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0='push -f' git p", Deny},
	{`GIT_CONFIG_PARAMETERS="'core.sshcommand=rm -rf /'" git status`, Deny},
	{`GIT_CONFIG_PARAMETERS="'alias.s'='push --force'" git s`, Deny},
	{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=color.ui GIT_CONFIG_VALUE_0=always git log", Ask},
	{"GIT_EXEC_PATH=/tmp git status", Ask},
	{"GIT_DIR=/tmp/x/.git git log", Ask},
	{"GIT_CONFIG_GLOBAL=/tmp/x git log", Ask},
	// git in another repository, and pushes configuration makes forced.
	{"git --git-dir=/tmp/x/.git log", Ask},
	{"git --work-tree=../x status", Ask},
	{"git -C ../x log", Ask},
	{"git -C sub status", Allow},
	{"git -c remote.origin.mirror push origin", Ask}, // the never-allow list (gate) has git push --mirror
	{"git -c remote.origin.push=+refs/heads/*:refs/heads/* push origin", Deny},
	{"git -c remote.origin.mirror=false push origin", Ask},
	{"git send-pack --force origin main", Deny},
	{"git -c protocol.ext.allow=always ls-remote 'ext::sh -c rm% -rf% /'", Deny},
	{"git ls-remote 'ext::sh -c touch% /tmp/p'", Ask},
	{"git send-pack origin main", Ask},
	{"git push origin '+main'", Deny},
	{`git push origin "+${b}"`, Deny},
	{`git push origin "$b"`, Ask},
	// Programs by descriptor, jobs installed for later.
	{"/proc/self/fd/3 push -f", Ask},
	{"/proc/self/root/usr/bin/git push -f", Deny},
	{"crontab <<< '* * * * * touch /tmp/p'", Ask},
	{"crontab -l", Default},
	// Work thrown away.
	{"git checkout -- .", Ask},
	{"git checkout HEAD -- :/", Ask},
	{"git checkout main", Default},
	{"git checkout -- main.go", Default},
	{"git restore .", Ask},
	{"git restore --worktree --staged .", Ask},
	{"git restore --staged .", Default},
	{"unzip -o x.zip -d .git/hooks", Ask},
	// Runners.
	{"/lib/ld-linux-aarch64.so.1 /bin/rm -rf /", Deny},
	{"ld.so --library-path /tmp /usr/bin/git status", Ask},
	{"/lib64/ld-linux-x86-64.so.2 --preload /tmp/x.so /usr/bin/git status", Ask},
	{"setarch x86_64 -R -- git push -f", Deny},
	{"linux64 rm -rf /", Deny},
	{"perf record -g -- rm -rf /", Deny},
	{"perf stat -e cycles rm -rf /", Deny},
	{"cpulimit --limit=50 rm -rf /", Deny},
	{"rlwrap -a rm -rf /", Deny},
	{"xargs -n1 rm -rf <<< '/'", Deny},
	{"echo / | xargs rm -rf", Deny},
	{"printf '/\\n' | xargs rm -rf", Deny},
	{"expect -c 'spawn ls'", Ask},
	{"gdb -ex 'shell ls'", Ask},
	{"gdb --batch --eval-command='shell ls' ./a.out", Ask},
	{"emacs --eval '(kill-emacs)'", Ask},
	// A shell escape written out is decided as its command.
	{"vim -c '!rm -rf /' -c q", Deny},
	{"vim -c 'set nu' f", Default},
	{"vim -c 'call system(\"x\")' f", Ask},
	{"nvim --cmd 'echo 1' f", Ask},
	// Scripts from process substitutions, perl word lists.
	{"bash <(echo 'rm -rf /')", Deny},
	{`sh <(printf '%s\n' 'git push -f')`, Deny},
	{"source <(echo rm -rf /)", Deny},
	{"bash <(curl x)", Ask},
	{"perl -e 'exec qw(git push --force)'", Deny},
	{"perl -e 'system(qw{rm -rf /})'", Deny},
	// A file written earlier on the line, then run.
	{"cp a x.sh && bash x.sh", Ask},
	{"cp /bin/sh ./s && ./s -c id", Ask},
	{"cp a run; ./run", Ask},
	{"cp a Makefile && make test", Ask},
	{"cp a rules.mk; make", Ask},
	{"cp a package.json && npm test", Ask},
	{"cp a main_test.go && go test ./...", Ask},
	{"cp a notes.txt && make", Default},
	{"cd sub && cp a x.sh && sh x.sh", Ask},
	{"cp a x.sh && sh y.sh", Default},
	// cd into another repository or project.
	{"cd /tmp/evil && git status", Ask},
	{"cd ../other && make", Ask},
	{"cd ~/x && npm test", Ask},
	{"cd cmd && git status && make test", Allow},
	{"cd /tmp/x && ls", Allow},
	{`cd "$D" && go test ./...`, Ask},
	{"CDPATH=/tmp cd x && git status", Ask},
	// Secrets.
	{"cat ~/.ssh/id_rsa", Ask},
	{"cat ~/.ssh/id_rsa.pub", Allow},
	{`head -c 32 "$HOME/.local/state/agent-shim/cache.key"`, Ask},
	{"grep x < ~/.ssh/id_ed25519", Ask},
	{"cat ~/.aws/credentials", Ask},
	{"ls ~/.ssh", Allow},
	// Builtins that run nothing.
	{"[ -f go.mod ]", Allow},
	{`test -n "$x" && echo y`, Allow},
	{`[ "$a" = b ] || echo no`, Allow},
	{"[ -v 'a[$(rm -rf /)]' ]", Ask},
	{"[ -v x ] && echo set", Allow},
	{"read -r a b c < README.md", Allow},
	{"IFS= read -r line < README.md", Allow},
	{"read -r -a words < README.md", Allow},
	{"read -r PATH < README.md", Default},
	{"read -r path < README.md", Default},
	{"[[ -f go.mod ]] && go build ./...", Allow},
	{`echo "${#arr[@]}" "${arr[@]}"`, Allow},
	{"echo $# $? $$", Allow},
	{"echo $((RANDOM % 6)) $((SECONDS + 1))", Allow},
	// Variables in front of a command.
	{"FOO=bar git status", Allow},
	{"ENV_VAR=1 go test ./...", Allow},
	{"PATH=/tmp git status", Ask},
	{"BASH_ENV=/tmp/x git status", Ask},
	{"GOOS=linux CGO_ENABLED=0 go build ./...", Allow},
	{"GOFLAGS=-toolexec=/tmp/x go build ./...", Ask},
	{"NODE_OPTIONS=--require=/tmp/x npm test", Ask},
	{"npm_config_script_shell=/tmp/x npm test", Ask},
	// less runs x: decided as x is (no rule matches it).
	{"LESS='+!x' less f", Default},
	{"LESS='+!/tmp/x' less f", Ask},
	{"TAR_OPTIONS=--to-command=x tar -tf a.tar", Ask},
	{"FOO=1 cat ~/.ssh/id_rsa", Ask},
}

func TestRound3(t *testing.T) {
	p := referencePolicy2()
	seen := map[string]bool{}
	for _, tc := range round3Tests {
		if seen[tc.in] {
			t.Errorf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		res := decideLocal(p, tc.in)
		if res.Decision != tc.want {
			t.Errorf("%q: got %v, want %v\n%s", tc.in, res.Decision, tc.want, explainText(res))
		}
	}
}

// TestSetScope: with the gate's scope, an absolute directory inside it is
// the project's own.
func TestSetScope(t *testing.T) {
	p := referencePolicy2()
	p.SetHome("/home/me")
	p.SetScope(func(d string) bool { return d == "/work/ck" || strings.HasPrefix(d, "/work/ck/") })
	for _, tc := range []struct {
		in   string
		want Decision
	}{
		{"cd /work/ck/cmd && git status", Allow},
		{"git -C /work/ck/vendor/x status", Allow},
		{"git -C /work/ck/../other status", Ask},
		{"cd /work/other && git status", Ask},
		{"cd /work/ck && git -C ../other log", Ask},
		{"cd /work/ck && git -C sub log", Allow},
		{"cd ~ && git status", Ask},
		{"GIT_DIR=/work/ck/.git git log", Ask}, // GIT_* is never accepted on an allow rule
	} {
		t.Logf("input: %q", tc.in)
		if got := p.Decide(tc.in); got.Decision != tc.want {
			t.Errorf("%q: got %v, want %v\n%s", tc.in, got.Decision, tc.want, explainText(got))
		}
	}
}
