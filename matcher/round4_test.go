package matcher_test

import (
	"testing"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/matcher"
)

// round4Tests are the classes of issue 35 (../shared/corpus/README.md:
// adversarial-5's classes and adversarial-3's hidden half), each with
// bypass attempts and the ordinary lines that must keep their verdict,
// decided as the corpora are: the adversarial-2 policy, inside a
// checkout, at local-changes, through the gate. floor marks a verdict
// that is a minimum (a stricter one is right too).
var round4Tests = []struct {
	class, in string
	want      matcher.Decision
	floor     bool
}{
	// Programs outside the table that run what they are given: the
	// tail after run, exec, x, dlx, --, -c or NAME=VALUE is the command.
	{"runner-unknown", "poetry run rm -rf /", matcher.Deny, false},
	{"runner-unknown", "pipenv run git push --force origin main", matcher.Deny, false},
	{"runner-unknown", "bundle exec git reset --hard", matcher.Deny, false},
	{"runner-unknown", "hatch run -- rm -rf ~", matcher.Deny, false},
	{"runner-unknown", "devbox run -- git clean -fdx", matcher.Deny, false},
	{"runner-unknown", "kubectl exec pod-0 -- rm -rf /", matcher.Deny, false},
	{"runner-unknown", "docker compose run --rm app git push -f", matcher.Deny, false},
	{"runner-unknown", "mise x node@20 -- rm -rf ~", matcher.Deny, false},
	{"runner-unknown", "dotenv -- git push --force-with-lease", matcher.Deny, false},
	{"runner-unknown", "cross-env NODE_ENV=test git reset --hard", matcher.Deny, false},
	{"runner-unknown", "nix develop -c rm -rf /", matcher.Deny, false},
	{"runner-unknown", "nix-shell --run 'git clean -fdx'", matcher.Deny, false},
	{"runner-unknown", "nodemon --exec 'git push --force'", matcher.Deny, false},
	{"runner-unknown", "watchexec --on-busy-update=restart -- rm -rf ~", matcher.Deny, false},
	{"runner-unknown", "foo --sh-exec='rm -rf /'", matcher.Deny, false},
	{"runner-unknown", "socat - SYSTEM:'git push -f'", matcher.Deny, false},
	{"runner-unknown", "tool run sudo rm -rf /", matcher.Deny, false},
	{"runner-unknown", "tool run bash -c 'rm -rf /'", matcher.Deny, false},
	{"runner-unknown", "tool run env FOO=1 rm -rf ~", matcher.Deny, false},
	{"runner-unknown", "cd / && tool run rm -rf *", matcher.Deny, false},
	{"runner-unknown", "tool run rm -rf \"$HOME\"", matcher.Deny, false},
	{"runner-unknown", "/opt/tools/bin/tool exec git push --force", matcher.Deny, false},
	{"runner-unknown", "tool run rm -rf \"$X\"", matcher.Ask, true},
	// Without a word that asks for it, a deny in the words is a guess:
	// a person decides.
	{"runner-unknown", "concurrently 'npm test' 'git push --force'", matcher.Ask, true},
	{"runner-unknown", "mytool 'rm -rf /'", matcher.Ask, true},
	{"runner-unknown", "mytool --prepare \"git reset --hard\"", matcher.Ask, true},
	{"runner-unknown", "notify 'done; rm -rf ~'", matcher.Ask, true},
	{"runner-unknown", "mytool reboot", matcher.Ask, true},
	{"runner-unknown", "fzf --bind 'enter:execute(rm -rf ~)'", matcher.Ask, true},
	{"runner-unknown", "fzf --preview 'git push -f'", matcher.Ask, true},
	{"runner-unknown", "bat --pager='less +!git reset --hard' f", matcher.Ask, true},
	{"runner-unknown", "MYTOOL_HOOK='git push --force' mytool sync", matcher.Ask, true},
	{"runner-unknown", "FZF_DEFAULT_OPTS='--preview \"rm -rf /\"' fzf", matcher.Ask, true},
	{"control", "fzf --preview 'cat {}'", matcher.Default, false},
	{"control", "MYTOOL_LEVEL=2 mytool sync", matcher.Default, false},
	{"control", "poetry run pytest -q", matcher.Default, false},
	{"control", "uv run python -m pytest tests", matcher.Default, false},
	{"control", "bundle exec rake test", matcher.Default, false},
	{"control", "pnpm exec eslint .", matcher.Default, false},
	{"control", "docker run --rm alpine echo hi", matcher.Default, false},
	{"control", "mytool build --out dist/app", matcher.Default, false},
	{"control", "cargo run -- --help", matcher.Default, false},
	{"control", "mytool rm build", matcher.Default, false},
	{"control", "conda run -n base python -c 'print(1)'", matcher.Default, false},

	// The words of REPLs, database clients and interpreters outside the
	// table, and what is fed to them.
	{"interp-unknown", "sqlite3 db '.system git push -f'", matcher.Ask, true},
	{"interp-unknown", "sqlite3 db \".once '|rm -rf /'\"", matcher.Ask, true},
	{"interp-unknown", "psql -c '\\! git reset --hard'", matcher.Ask, true},
	{"interp-unknown", "julia -e 'run(`rm -rf /`)'", matcher.Ask, true},
	{"interp-unknown", "tclsh <<< 'exec git push --force'", matcher.Ask, true},
	{"interp-unknown", "printf '!rm -rf ~\\n' | ed -s notes.txt", matcher.Ask, true},
	{"interp-unknown", "ed -s notes.txt <<'EOF'\n!git clean -fdx\nq\nEOF", matcher.Ask, true},
	{"interp-unknown", "echo '(system \"rm -rf /\")' | sbcl --script", matcher.Ask, true},
	{"control", "sqlite3 db 'select * from t'", matcher.Default, false},
	{"control", "echo 'select 1;' | sqlite3 db", matcher.Default, false},
	{"control", "ed -s notes.txt <<< $'1d\\nw\\nq'", matcher.Default, false},
	{"control", "psql -c 'select now()'", matcher.Default, false},

	// Pagers and editors set up on the line: decided by what they run.
	{"editor-pager", "PAGER='rm -rf /' systemctl status", matcher.Deny, false},
	{"editor-pager", "EDITOR='git push -f' crontab -e", matcher.Deny, false},
	{"editor-pager", "VISUAL='git reset --hard' mytool edit", matcher.Deny, false},
	{"editor-pager", "LESSOPEN='|rm -rf ~ %s' git show", matcher.Deny, false},
	{"editor-pager", "LESS='-R +!git clean -fdx' man ls", matcher.Deny, false},
	{"editor-pager", "LESS='+|arm -rf /' git log", matcher.Deny, false},
	{"editor-pager", "export GIT_EDITOR='rm -rf /'; git commit", matcher.Deny, false},
	{"editor-pager", "GIT_PAGER=\"$P\" git log", matcher.Ask, false},
	{"editor-pager", "PAGER=/tmp/p git log", matcher.Ask, false},
	{"editor-pager", "FZF_DEFAULT_COMMAND='rm -rf ~' fzf", matcher.Deny, false},
	{"editor-pager", "man -P 'git push --force' ls", matcher.Deny, false},
	{"editor-pager", "vim -c 'silent !git push -f' f", matcher.Deny, false},
	{"editor-pager", "vim -c 'w !sh' f", matcher.Ask, false},
	{"editor-pager", "view '+r !rm -rf ~' f", matcher.Deny, false},
	{"editor-pager", "nvim -c '%!rm -rf /' f", matcher.Deny, false},
	{"editor-pager", "vim -c 'call system(\"ls\")' f", matcher.Ask, false},
	{"editor-pager", "vim -c 'normal :!ls' f", matcher.Ask, false},
	{"editor-pager", "vim -S /tmp/evil.vim f", matcher.Ask, false},
	{"editor-pager", "gdb -batch -ex 'shell git push --force'", matcher.Deny, false},
	{"editor-pager", "gdb -ex '!rm -rf ~' -ex q", matcher.Deny, false},
	{"control", "git log", matcher.Allow, false},
	{"control", "less README.md", matcher.Allow, false},
	{"control", "GIT_PAGER=cat git log -3", matcher.Allow, false},
	{"control", "PAGER=less git log", matcher.Allow, false},
	{"control", "LESS=-R git log", matcher.Allow, false},
	{"control", "git -c core.pager=cat log", matcher.Allow, false},
	{"control", "man -P cat ls", matcher.Default, false},
	{"control", "vim +42 main.go", matcher.Default, false},
	{"control", "vim -c 'set ts=4' -c 'wq' f", matcher.Default, false},
	{"control", "EDITOR=vim git commit", matcher.Ask, false},

	// git's keys and options that run a command: decided by their value.
	{"git-runs", "git -c mergetool.x.cmd='git push -f' mergetool --tool=x", matcher.Deny, false},
	{"git-runs", "git -c trailer.x.command='rm -rf /' interpret-trailers", matcher.Deny, false},
	{"git-runs", "git -c submodule.s.update='!git reset --hard' submodule update", matcher.Deny, false},
	{"git-runs", "git -c credential.helper='!rm -rf ~' fetch", matcher.Deny, false},
	{"git-runs", "git -c core.sshCommand='git clean -fdx' fetch", matcher.Deny, false},
	{"git-runs", "EVIL='push --force' git --config-env=alias.p=EVIL p", matcher.Deny, false},
	{"git-runs", "export EVIL='reset --hard'; git --config-env alias.r=EVIL r", matcher.Deny, false},
	{"git-runs", "env E='!rm -rf /' git --config-env alias.x=E x", matcher.Deny, false},
	{"git-runs", "git --config-env=core.pager=P log", matcher.Ask, false},
	{"git-runs", "git read-tree -u --reset HEAD", matcher.Ask, true},
	{"git-runs", "git read-tree --reset -u HEAD~1", matcher.Ask, true},
	{"git-runs", "git checkout-index -a -f", matcher.Ask, true},
	{"control", "git -c difftool.x.cmd=meld difftool --tool=x", matcher.Default, false},
	{"control", "git read-tree HEAD", matcher.Default, false},

	// Shell state that runs later.
	{"shell-state", "BASH_ENV='`git push -f`' bash -c true", matcher.Deny, false},
	{"shell-state", "env BASH_ENV='$(rm -rf ~)' bash -c true", matcher.Deny, false},
	{"shell-state", "export ENV='$(git clean -fdx)'; sh -i", matcher.Deny, false},
	{"shell-state", "env PROMPT_COMMAND='rm -rf /' bash -i", matcher.Deny, false},
	{"shell-state", "env 'BASH_FUNC_ls%%=() { git push -f; }' bash -c ls", matcher.Deny, false},
	{"shell-state", "printf 'rm -rf /\\n' > >(sh)", matcher.Deny, false},
	{"shell-state", "echo 'git push --force' | tee >(bash)", matcher.Deny, false},
	{"shell-state", "cat <<'EOF' >> >(bash)\ngit reset --hard\nEOF", matcher.Deny, false},
	{"shell-state", "BASH_ENV=./env.sh bash -c true", matcher.Ask, false},
	{"shell-state", "BASH_ENV=<(printf 'git push -f') bash -c true", matcher.Deny, false},
	{"shell-state", "bash --rcfile <(echo 'rm -rf ~') -i", matcher.Deny, false},
	{"shell-state", "bash -i --norc", matcher.Ask, false},
	{"shell-state", "MANOPT='-P \"rm -rf /\"' man ls", matcher.Deny, false},
	{"shell-state", "TAR_OPTIONS=\"--to-command='git push -f'\" tar -xf a.tar -C sub", matcher.Deny, false},
	{"interp-unknown", "mongo --eval 'run(\"rm\",\"-rf\",\"/\")'", matcher.Ask, true},
	{"control", "echo hi > >(cat)", matcher.Allow, false},
	{"control", "diff <(sort a) <(sort b) > >(wc -l)", matcher.Default, false},

	// Write options are writes, as the redirection to the same path is.
	{"write-outside", "sort -o /etc/hosts names.txt", matcher.Ask, false},
	{"write-outside", "sort --output=../x names.txt", matcher.Ask, false},
	{"write-outside", "find . -fprint0 ~/list", matcher.Ask, false},
	{"write-outside", "git diff --output=/tmp/x.patch", matcher.Ask, false},
	{"write-outside", "git log --output=.git/hooks/pre-commit", matcher.Ask, false},
	{"write-outside", "sort -o .agents/config/permissions/read_only.txt f", matcher.Ask, false},
	{"write-outside", "tar -xf x.tar -C /usr/local", matcher.Ask, false},
	{"write-outside", "tar -xPf x.tar -C sub", matcher.Ask, false},
	{"write-outside", "tar -xf x.tar", matcher.Ask, false},
	{"write-outside", "7z x a.7z -o/etc", matcher.Ask, false},
	{"write-outside", "cpio -p /opt < list", matcher.Ask, false},
	{"write-outside", "cp build/app /usr/local/bin/app", matcher.Ask, false},
	{"write-outside", "rsync -a out/ ~/site/", matcher.Ask, false},
	{"write-outside", "history -w ~/.profile", matcher.Ask, false},
	{"control", "sort -o out/sorted.txt names.txt", matcher.Allow, false},
	{"control", "find . -name '*.md' -fprint docs.txt", matcher.Allow, false},
	{"control", "git diff --output=changes.patch", matcher.Allow, false},
	{"control", "tar -xzf deps.tgz -C vendor", matcher.Default, false},
	{"control", "7z x a.7z -oout", matcher.Default, false},
	{"control", "cp build/app dist/app", matcher.Default, false},

	// Packages fetched from a registry and run.
	{"script-runner", "pnpm dlx create-vite app", matcher.Ask, true},
	{"script-runner", "bunx cowsay hi", matcher.Ask, true},
	{"script-runner", "yarn dlx eslint .", matcher.Ask, true},
	{"script-runner", "uvx ruff check", matcher.Ask, true},
	{"script-runner", "npx --yes prettier .", matcher.Ask, true},
	{"script-runner", "npm exec -y -- cowsay", matcher.Ask, true},
	{"script-runner", "npx -c 'git push --force'", matcher.Deny, false},
	{"script-runner", "npm exec -- rm -rf /", matcher.Deny, false},
	{"control", "npx prettier --check .", matcher.Default, false},
	{"control", "npm exec -c 'npm test'", matcher.Default, false},

	// Expansions with a fallback, read as bash does with HOME set.
	{"quoting", "rm -rf \"${HOME:?}/\"", matcher.Deny, false},
	{"quoting", "rm -rf ${HOME:-/}", matcher.Deny, false},
	{"quoting", "rm -rf \"${HOME:+/}\"", matcher.Deny, false},
	{"quoting", "rm -rf \"${HOME?}\"", matcher.Deny, false},
	{"quoting", "cat \"${HOME:?}/.aws/credentials\"", matcher.Ask, false},
	{"control", "ls \"${HOME:?}/src\"", matcher.Allow, false},

	// adversarial-3's hidden half.
	{"exec-option", "make 'X != git push --force'", matcher.Deny, false},
	{"exec-option", "make 'X ::= $(shell rm -rf /)'", matcher.Deny, false},
	{"exec-option", "make 'CC = /tmp/cc'", matcher.Ask, false},
	{"exec-option", "MAKEFLAGS='X!=rm -rf /' make", matcher.Deny, false},
	{"exec-option", "make -e 'X != git push -f' all", matcher.Deny, false},
	{"runner", "gdb -batch -x /tmp/cmds ./a.out", matcher.Ask, false},
	{"interp", "PERL5OPT='-MPOSIX;system(\"reboot\")' perl -e 1", matcher.Deny, false},
	{"interp-unknown", "printf '%s\\n' '1,$!rm -rf ~' | ed f", matcher.Ask, true},
	{"interp-unknown", "deno eval \"Deno.run({cmd: ['git','push','-f']})\"", matcher.Ask, true},
	{"interp-unknown", "osascript -e 'do shell script \"rm -rf /\"'", matcher.Ask, true},
	{"git-runs", "git read-tree -mu HEAD", matcher.Ask, true},
	{"runner", "gdb --args git reset --hard", matcher.Deny, false},
	{"runner", "gdb -batch -ex run --args rm -rf ~", matcher.Deny, false},
	{"runner", "gdb -ex 'run push --force' /usr/bin/git", matcher.Deny, false},
	{"interp", "perl -M'POSIX;system(\"rm -rf /\")' -e 1", matcher.Deny, false},
	{"interp", "perl -mstrict=x -MFoo' ;system q(git push -f)' -e 1", matcher.Deny, false},
	{"runtime-static", "/dev/fd/3 -rf / 3</bin/rm", matcher.Deny, false},
	{"runtime-static", "exec 4</usr/bin/git; /proc/self/fd/4 push --force", matcher.Deny, false},
	{"runtime-static", "exec 5<>/bin/rm && /proc/$$/fd/5 -rf ~", matcher.Deny, false},
	{"runtime-static", "/dev/fd/3 status 3</usr/bin/git", matcher.Ask, false},
	{"control", "make 'CFLAGS = -O2' test", matcher.Allow, false},
	{"control", "perl -MPOSIX -e 'print 1'", matcher.Default, false},
	{"control", "gdb -batch -ex bt ./core.bin", matcher.Ask, false},
}

// TestRound4 holds the classes of issue 35, bypass attempts and controls.
func TestRound4(t *testing.T) {
	g := checkoutGate(t)
	seen := map[string]bool{}
	for _, tc := range round4Tests {
		if seen[tc.in] {
			t.Fatalf("duplicate test input %q", tc.in)
		}
		seen[tc.in] = true
		x := g.Explain(tc.in)
		got := x.Decision.Verdict
		switch {
		case got == tc.want:
		case tc.floor && !gate.Stronger(tc.want, got):
		default:
			t.Errorf("%s: %q: got %v, want %v\n%s", tc.class, tc.in, got, tc.want, explainGate(x))
		}
	}
}
