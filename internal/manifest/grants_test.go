package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
)

// matches reports whether any of line's grants matches cmd the way the agent
// applies them: the regex against the whole command text.
func matches(t *testing.T, line, cmd string) bool {
	t.Helper()
	grants, err := Grants(line)
	if err != nil {
		t.Fatalf("Grants(%q): %v", line, err)
	}
	if len(grants) == 0 {
		t.Fatalf("Grants(%q): no grants", line)
	}
	for _, g := range grants {
		re, ok := strings.CutPrefix(g, "command(regex:")
		if !ok || !strings.HasSuffix(re, ")") {
			t.Fatalf("Grants(%q): %q is not a regex grant", line, g)
		}
		rx, err := regexp.Compile(strings.TrimSuffix(re, ")"))
		if err != nil {
			t.Fatalf("Grants(%q): %v", line, err)
		}
		if rx.MatchString(cmd) {
			return true
		}
	}
	return false
}

var grantTests = []struct {
	line, cmd string
	want      bool
}{
	// Plain lines, further arguments, word boundaries.
	{"git status", "git status", true},
	{"git status", "git status --short", true},
	{"git status", "  git status  ", true},
	{"git status", "git statusx", false},
	{"git status", "git-lfs status", false},
	{"git status", "git stat", false},
	{"git status", "gitk status", false},
	{"git status", "git log", false},
	{"cat", "cat", true},
	{"cat", "cat README.md", true},
	{"cat", "catalog", false},
	{"cat", "cat catalog", true},
	{"cat", "scat x", false},
	{"go test", "go test ./...", true},
	{"go test", "go test -run TestFoo -count=1 ./manifest/...", true},
	{"go test", "go testx", false},
	{"go test", "go vet ./...", false},
	{"ls", "ls -la /tmp", true},
	{"ls", "ls\t-la", true},

	// Env prefixes: any name but those that change what runs (for every
	// program, or for this one by the table), with literal values.
	{"git status", "LANG=C git status", true},
	{"git status", `LANG=C TZ="a b" git status`, true},
	{"git status", `LC_ALL='a b' TERM= git status`, true},
	{"git status", "LANGUAGE=en LC_MESSAGES=C LC_=x git status", true},
	{"git status", "NO_COLOR=1 FORCE_COLOR=0 CLICOLOR=0 CLICOLOR_FORCE=1 git status", true},
	{"git status", "COLUMNS=80 LINES=24 CI=true git status", true},
	{"git status", `GOOS=linux git status`, true},
	{"go build", "GOOS=linux GOARCH=arm64 go build ./...", true},
	{"go build", "CGO_ENABLED=0 go build ./...", true},
	{"git status", "FOO=1 git status", true},
	{"git status", "PATHX=1 git status", false},
	{"git status", "MYPATH=1 git status", true},
	{"git status", "LANGX=1 git status", true},
	{"git status", "LAN=1 git status", true},
	{"git status", "LC=1 git status", true},
	{"git status", "lang=C git status", true},
	{"git status", "PATH=/tmp/evil git status", false},
	{"git status", "LANG=C PATH=/tmp/evil git status", false},
	{"git status", "LD_PRELOAD=/tmp/x.so git status", false},
	{"git status", "LD_LIBRARY_PATH=/tmp git status", false},
	{"git status", "DYLD_INSERT_LIBRARIES=/tmp/x git status", false},
	{"git status", "GIT_EXTERNAL_DIFF=/tmp/x git status", false},
	{"git status", "GIT_PAGER=x git status", false},
	{"git status", "GIT_DIR=/tmp/x git status", false},
	{"git status", "GIT_CONFIG_GLOBAL=/tmp/x git status", false},
	{"git status", "HOME=/tmp/x git status", false},
	{"git status", "XDG_CONFIG_HOME=/tmp/x git status", false},
	{"git status", "PAGER=x git status", false},
	{"git status", "EDITOR=x git status", false},
	{"git status", "ENV=/tmp/x git status", false},
	{"git status", "BASH_ENV=/tmp/x git status", false},
	{"go test", "GOFLAGS=-toolexec=/tmp/x go test ./...", false},
	{"go test", "CC=/tmp/x go test ./...", false},
	{"go test", "GOTOOLCHAIN=go1.99 go test ./...", false},
	{"python3 -m pytest", "PYTHONPATH=/tmp python3 -m pytest", false},
	{"python3 -m pytest", "PYTHONSTARTUP=/tmp/x python3 -m pytest", false},
	{"npm test", "NODE_OPTIONS=--require=/tmp/x npm test", false},
	{"npm test", "CI=1 npm test", true},
	{"less", "LESSOPEN='|x %s' LANG=C less f", false},
	{"git status", "LANG=$(rm -rf /) git status", false},
	{"git status", "LANG=`rm -rf /` git status", false},
	{"git status", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=x git status", false},
	{"git status", "GIT_CONFIG_PARAMETERS=x git status", false},
	{"git status", "GIT_EXEC_PATH=/tmp git status", false},
	{"git status", "FOO=1 GIT_DIR=/tmp/x git status", false},
	{"git status", "GI=1 git status", false},
	{"git status", "1=x git status", false},
	{"git status", "BASH_FUNC_git%%=x git status", false},
	{"git status", "path=/tmp git status", false},
	{"ls", "GIT_DIR=/tmp/x ls", true},
	{"ls", "LD_PRELOAD=/tmp/x ls", false},
	{"ls", "XDG_CONFIG_HOME=/tmp ls", false},
	{"go test", "CGO_CFLAGS=-fplugin=/tmp/x go test ./...", false},
	{"go test", "GOCACHE=/tmp/c go test ./...", false},
	{"go test", "GOEXPERIMENT=x GOOS=linux go test ./...", false},
	{"cargo test", "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=x cargo test", false},
	{"cargo test", "RUSTC_WRAPPER=x cargo test", false},
	{"cargo test", "RUST_BACKTRACE=1 cargo test", true},
	{"npm test", "npm_config_script_shell=/tmp/x npm test", false},
	{"less", "LESS='+!x' less f", false},
	{"make", "MAKEFLAGS=x make", false},
	{"tar -tf", "TAR_OPTIONS=--to-command=x tar -tf a.tar", false},
	{"git status", `LANG="$(rm -rf /)" git status`, false},
	{"git status", `LANG=$HOME git status`, false},
	{"git status", `LANG="$HOME" git status`, false},
	{"git status", `LANG=C;rm -rf / git status`, false},
	{"git status", "LANG='\nrm -rf /' git status", false},

	// Binary path prefixes.
	{"git status", "/usr/bin/git status", true},
	{"git status", "./git status", true},
	{"git status", "~/bin/git status", true},
	{"jiri status", "./.jiri_root/bin/jiri status", true},
	{"jiri status", ".jiri_root/bin/jiri status", true},
	{"jiri status", "/usr/bin/jirix status", false},
	{"git status", "$(rm${IFS}-rf${IFS}/)/git status", false},
	{"git status", "`rm`/git status", false},
	{"git status", "/usr/bin/git-lfs status", false},

	// git global flags.
	{"git status", `git -C "/dir with spaces" status`, true},
	{"git status", `git -C /dir status`, true},
	{"git status", `git -C '/dir with spaces' --no-pager status`, true},
	{"git log", "git -c k=v --no-pager log", true},
	{"git log", "git -c color.ui=always log --oneline", true},
	{"git log", "git --git-dir=/x/.git --work-tree /x log", true},
	{"git log", "git -c core.pager=less log", false},
	{"git log", "git -c core.Pager=less log", false},
	{"git log", "git -c CORE.PAGER=less log", false},
	{"git log", "git -c alias.log=!sh log", false},
	{"git log", "git -c 'core.pager=rm -rf /' log", false},
	{"git log", "git -c diff.external=/tmp/x log", false},
	{"git log", "git --exec-path=/tmp/x log", false},
	{"git log", "git --config-env=core.pager=X log", false},
	{"git status", "git -C $(rm -rf /) status", false},

	// fx, ffx, jiri global flags.
	{"fx test", "fx -t [fe80::1%eth0]:8022 test //foo:bar", true},
	{"fx test", "fx --dir out/x test", true},
	{"fx test", "fx testx", false},
	{"ffx target list", "fx -t my-dev ffx --machine json target list", true},
	{"ffx target list", "ffx --machine json target list", true},
	{"ffx target list", "ffx -t my-dev target list", true},
	{"ffx target list", "/opt/ffx target list --format s", true},
	{"ffx target list", "ffx target add", false},
	{"jiri status", ".jiri_root/bin/jiri -show-progress=false status", true},
	{"jiri status", "jiri -j 8 status", true},
	{"jiri status", "jiri update", false},

	// git flags anywhere when the rule's arguments are all flags.
	{"git push --force", "git push --force", true},
	{"git push --force", "git push origin main --force", true},
	{"git push --force", "git push --force origin main", true},
	{"git push --force", "git push origin --force main", true},
	{"git push --force", "git -C /x push origin main --force", true},
	{"git push --force", "git push origin main", false},
	{"git push --force", "git push --force-with-lease origin main", false},
	{"git push --force", "git push origin --forcex", false},
	{"git push -f", "git push -f origin main", true},
	{"git push -f", "git push origin main -f", true},
	{"git push -f", "git push -uf origin main", true},
	{"git push -f", "git push -u origin main", false},
	{"git push --force --no-verify", "git push --no-verify origin --force", true},
	{"git push --force --no-verify", "git push origin --force", false},
	{"git reset --hard", "git reset --hard HEAD~1", true},
	{"git reset --hard", "git reset HEAD~1 --hard", true},
	{"git reset --hard", "git reset --soft HEAD~1", false},
	{"git checkout", "git checkout -b x", true},

	// git clean force detection.
	{"git clean -fdx", "git clean -fdx", true},
	{"git clean -fdx", "git clean -xdf", true},
	{"git clean -fdx", "git clean --force", true},
	{"git clean -fdx", "git clean -d -x -f", true},
	{"git clean -fdx", "git clean -f", true},
	{"git clean -fdx", "git -C /x clean -ffdx", true},
	{"git clean -fdx", "git clean -n", false},
	{"git clean -fdx", "git clean -dx", false},
	{"git clean -f", "git clean -d -f -x", true},

	// sed in place.
	{"sed -i", "sed -i s/a/b/ f", true},
	{"sed -i", "sed -E -i '' 's/a/b/' f", true},
	{"sed -i", "sed --in-place=.bak s/a/b/ f", true},
	{"sed -i", "sed --in-place s/a/b/ f", true},
	{"sed -i", "sed --in s/a/b/ f", true},
	{"sed -i", "sed -i.bak s/a/b/ f", true},
	{"sed -i", "sed -Ei s/a/b/ f", true},
	{"sed -i", "/bin/sed -n -i s/a/b/ f", true},
	{"sed -i", "sed -n s/a/b/ f", false},
	{"sed -i", "sed 's/-i/x/' f", false},
	{"sed --in-place", "sed -i s/a/b/ f", true},
	// A sed rule without -i never matches an in-place edit.
	{"sed -n", "sed -n 1,10p f", true},
	{"sed -n", "sed -n -e 1p f", true},
	{"sed -n", "sed -n -i 1p f", false},
	{"sed -n", "sed -n -ni 1p f", false},
	{"sed -n", "sed -n --in-place 1p f", false},
	{"sed -n", "sed -n --in-pl 1p f", false},
	{"sed -n", "sed -n '-i' 1p f", false},
	{"sed -n", `sed -n "-i" 1p f`, false},
	{"sed -n", `sed -n ''-i 1p f`, false},
	{"sed -n", `sed -n \-i 1p f`, false},
	{"sed -n", "sed -n --quiet 1p f", true},

	// Options that run programs or write files are not further arguments.
	{"rg", "rg -n foo src", true},
	{"rg", "rg --pre-glob '*.gz' foo", true},
	{"rg", "rg --pre=sh foo", false},
	{"rg", "rg --pre sh foo", false},
	{"rg", "rg foo --pre sh", false},
	{"find", "find . -name '*.go' -type f", true},
	{"find", "find . -exec rm {} ;", false},
	{"find", `find . -exec rm {} \;`, false},
	{"find", "find . -delete", false},
	{"find", "find . --delete", false},
	{"find", "find . -execdir x {} +", false},
	{"find", "find . -executable", true},
	{"go vet", "go vet ./...", true},
	{"go vet", "go vet -vettool=/tmp/x ./...", false},
	{"go test", "go test -exec /tmp/x ./...", false},
	{"go test", "go test --toolexec=/tmp/x ./...", false},
	{"git grep", "git grep -n foo", true},
	{"git grep", "git grep -O foo", false},
	{"git grep", "git grep -Ovim foo", false},
	{"git grep", "git grep --open-files-in-pager=vim foo", false},
	{"git grep", "git grep --open foo", false},
	{"git log", "git log --oneline -n 5", true},
	{"git log", "git log --output=/tmp/x", false},
	{"git rebase", "git rebase origin/main", true},
	{"git rebase", "git rebase -x 'rm -rf /' origin/main", false},
	{"git rebase", "git rebase --exec=x main", false},
	{"sort", "sort -u f", true},
	{"sort", "sort -o f f", false},
	{"sort", "sort --compress-program=sh f", false},
	// Quotes and escapes inside an option's name: a name that has left the
	// forbidden ones may go on with any pieces, one that has not may not.
	{"rg", "rg --glob='*.go' foo", true},
	{"find", "find . -name'*.go'", true},
	{"rg", "rg --p're'=sh foo", false},
	{"rg", "rg --pr\\e=sh foo", false},
	{"rg", `rg "--pre"=sh foo`, false},
	{"rg", "rg --'pre'=sh foo", false},
	{"rg", "rg --pre'=sh' foo", false},
	{"find", "find . -e'xec' rm {} +", false},
	{"find", "find . -e\\xec rm {} +", false},
	{"find", "find . -e=x", true},
	{"find", "find . -e'=x'", false},
	{"go vet", "go vet -vett'ool'=/tmp/x ./...", false},
	{"go vet", "go vet -vettoo'l'=/tmp/x ./...", false},
	{"git ls-remote", "git ls-remote --up'load-pack'=x .", false},
	{"git ls-remote", "git ls-remote --u\\pload-pack=x .", false},

	// Options the program table says run or write (package programs).
	{"git ls-remote", "git ls-remote origin", true},
	{"git ls-remote", "git ls-remote --upload-pack='rm -rf /' .", false},
	{"git ls-remote", "git ls-remote --upl=x .", false},
	{"git ls-remote", "git ls-remote -u x .", false},
	{"git push", "git push --receive-pack=x", false},
	{"git push", "git push --exec=x", false},
	{"git diff", "git diff --ext-diff", false},
	{"git show", "git show --textconv HEAD:f", false},
	{"git status", "git -c safe.directory=* status", false},
	{"git status", "git -c color.ui=never status", true},
	{"git status", "git -c core.pager=x status", false},
	{"tar -tf", "tar -tf x.tar", true},
	{"tar -tf", "tar -tf x.tar --checkpoint-action=exec=x", false},
	{"tar -tf", "tar -tf x.tar -I x", false},
	{"tar -tf", "tar -tf x.tar --index-file=x", false},
	{"less", "less f", true},
	{"less", "less '+!rm -rf /' f", false},
	{"less", "less +!x f", false},
	{"less", "LESSOPEN='|x %s' less f", false},
	{"less", "LANG=C less f", true},
	{"man", "man ls", true},
	{"man", "man -P x ls", false},
	{"make", "make -j8 all", true},
	{"make", "make --eval=x", false},
	{"npm test", "npm test --script-shell=x", false},
	{"cargo test", "cargo test --config x", false},
	{"file", "file -C -m x", false},
	{"date", "date -s x", false},
	{"date", "date +%F", true},
	{"go build", "go build -toolexec=x ./...", false},
	{"go build", "go build -o bin/x ./...", true},
	{"awk", "awk -f x f", false},
	{"gofmt", "gofmt -w x.go", false},
	{"gofmt", "gofmt -l x.go", true},
	{"cipd help", "cipd --help", true},
	{"cipd help", "cipd ensure --help", true},
	{"cipd help", "cipd help ensure", true},
	{"cipd help", "cipd ensure", false},
	{"jj help", "jj log --help", true},
	{"bb help", "bb --help", true},

	// Trailing / and ~ targets.
	{"rm -rf /", "rm -rf /", true},
	{"rm -rf /", "rm -rf //", true},
	{"rm -rf /", "rm -rf / home", true},
	{"rm -rf /", "/bin/rm -rf /", true},
	{"rm -rf /", "LANG=C rm -rf /", true},
	{"rm -rf /", "rm -rf /var", false},
	{"rm -rf /", "rm -rf ./", false},
	{"rm -rf /", "rm -rf", false},
	{"rm -rf ~", "rm -rf ~", true},
	{"rm -rf ~", "rm -rf ~/", true},
	{"rm -rf ~", "rm -rf ~//", true},
	{"rm -rf ~", "rm -rf ~/src", false},
	{"rm -rf ~", "rm -rf ~user", false},

	// help variants.
	{"git help", "git help", true},
	{"git help", "git help log", true},
	{"git help", "git log --help", true},
	{"git help", "git --help", true},
	{"git help", "git -C /x commit --help", true},
	{"git help", "git log", false},
	{"git help", "git helpx", false},
	{"fx help", "fx help build", true},
	{"fx help", "fx -t x build --help", true},
	{"ffx help", "ffx target list --help", true},
	{"jiri help", "jiri help update", true},
	{"jiri help", "jiri update --help", true},

	// Quoted words.
	{"grep '#include'", "grep '#include' x", true},
	{"grep '#include'", `grep "#include" x`, true},
	{"grep '#include'", "grep #include x", false},
	{"grep 'a b'", "grep 'a b' f", true},
	{"grep 'a b'", "grep a b f", false},
	{`grep "it's"`, `grep "it's" f`, true},
	{"grep foo", "grep foo 'a b' f", true},

	// No chained tail, substitution or redirection, ever.
	{"git status", "git status; rm -rf /", false},
	{"git status", "git status ;rm -rf /", false},
	{"git status", "git status && rm -rf /", false},
	{"git status", "git status || rm -rf /", false},
	{"git status", "git status & rm -rf /", false},
	{"git status", "git status | sh", false},
	{"git status", "git status\nrm -rf /", false},
	{"git status", "git status\r\nrm -rf /", false},
	{"git status", "git status `rm -rf /`", false},
	{"git status", "git status $(rm -rf /)", false},
	{"git status", `git status "$(rm -rf /)"`, false},
	{"git status", `git status "` + "`rm -rf /`" + `"`, false},
	{"git status", "git status > /etc/passwd", false},
	{"git status", "git status >/etc/passwd", false},
	{"git status", "git status 2>&1", false},
	{"git status", "git status < /etc/passwd", false},
	{"git status", "git status <(rm -rf /)", false},
	{"git status", "git status ${IFS}", false},
	{"git status", "git status\\\nrm", false},
	{"git status", "git status '\nrm -rf /'", false},
	{"git status", "git status x\x00", false},
	{"cat", "cat f;rm -rf /", false},
	{"cat", "cat f|sh", false},
	{"cat", "cat 'f' ; rm", false},
	{"cat", `cat "f" ; rm`, false},
	{"cat", `cat 'a'"b"c\ d`, true},
	{"git push --force", "git push --force; rm -rf /", false},
	{"git push --force", "git push --force\nrm -rf /", false},
	{"sed -i", "sed -i s/a/b/ f; rm -rf /", false},
	{"git clean -f", "git clean -f && rm -rf /", false},
	{"git help", "git help; rm -rf /", false},
	{"rm -rf /", "rm -rf / ; echo", false},
}

func TestGrants(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, tc := range grantTests {
		key := [2]string{tc.line, tc.cmd}
		if seen[key] {
			t.Errorf("duplicate test case %q %q", tc.line, tc.cmd)
		}
		seen[key] = true
		if got := matches(t, tc.line, tc.cmd); got != tc.want {
			t.Errorf("rule %q, command %q: match=%v, want %v", tc.line, tc.cmd, got, tc.want)
		}
	}
}

// TestEnvShimSafe: every assignment an allow grant accepts in front of a
// command is one the shim's own engine allows on the same rule, so a grant
// never lets the agent run what agent-shim would stop; and what the grant
// refuses, the shim does not allow either.
func TestEnvShimSafe(t *testing.T) {
	for _, tc := range []struct{ line, cmd string }{
		{"git status", "FOO=bar git status"},
		{"git status", "ENV_VAR=1 A_B=2 lang=C git status"},
		{"git status", "MYPATH=1 XDX=1 LDX=1 GITS=1 git status"},
		{"git status", "PATH=/tmp git status"},
		{"git status", "GIT_DIR=/tmp/x git status"},
		{"git status", "GIT_CONFIG_PARAMETERS=x git status"},
		{"git status", "HOME=/tmp git status"},
		{"git status", "LD_PRELOAD=/tmp/x git status"},
		{"git status", "BASH_ENV=/tmp/x git status"},
		{"git status", "ENV=/tmp/x git status"},
		{"git status", "PAGER=x git status"},
		{"go test", "GOOS=linux CGO_ENABLED=0 go test ./..."},
		{"go test", "GOFLAGS=-x go test ./..."},
		{"go test", "CC=/tmp/x go test ./..."},
		{"npm test", "CI=1 FOO=x npm test"},
		{"npm test", "NODE_OPTIONS=--require=/tmp/x npm test"},
		{"python3 -m pytest", "FOO=1 python3 -m pytest"},
		{"python3 -m pytest", "PYTHONPATH=/tmp python3 -m pytest"},
		{"less", "FOO=1 less f"},
		{"less", "LESSOPEN='|x %s' less f"},
		{"cargo test", "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=x cargo test"},
	} {
		t.Logf("input: %q under %q", tc.cmd, tc.line)
		gs, err := Grants(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		p := matcher.FromGrants(gs, nil, nil, []matcher.Managed{{Line: tc.line, Grants: gs}})
		hand := matcher.FromGrants(gs, nil, nil, nil) // the grants read as regexes
		grant := matches(t, tc.line, tc.cmd)
		for _, pol := range []*matcher.Policy{p, hand} {
			d := pol.Decide(tc.cmd).Decision
			if grant && d != matcher.Allow {
				t.Errorf("the grant matches %q, but the shim decides %v under the rule %s", tc.cmd, d, tc.line)
			}
		}
		if want := !refused(tc.cmd); grant != want {
			t.Errorf("the grant matches %q: %v, want %v", tc.cmd, grant, want)
		}
		if d := p.Decide(tc.cmd).Decision; refused(tc.cmd) && d == matcher.Allow {
			t.Errorf("the shim allows %q under the rule %s", tc.cmd, tc.line)
		}
	}
}

// refused reports the test commands of TestEnvShimSafe that set a
// variable that changes what runs.
func refused(cmd string) bool {
	for _, n := range []string{"PATH=", "GIT_DIR=", "GIT_CONFIG_PARAMETERS=", "HOME=", "LD_PRELOAD=", "BASH_ENV=", "ENV=",
		"PAGER=", "GOFLAGS=", "CC=", "NODE_OPTIONS=", "PYTHONPATH=", "LESSOPEN=", "CARGO_TARGET_"} {
		if strings.HasPrefix(cmd, n) {
			return true
		}
	}
	return false
}

// fuchsiaVectors are command lines Fuchsia's own grant expansion accepts
// for a rule (issue 23 names the four with an environment prefix), which
// an agent reading config.json alone must find allowed too.
var fuchsiaVectors = []struct{ line, cmd string }{
	{"git status", "FOO=bar git status"},
	{"git status", "git -C /some/dir status"},
	{"git status", "git --no-pager status"},
	{"git status", "/usr/bin/git status"},
	{"git status", "git status --short"},
	{"fx test", "ENV_VAR=1 fx -t my-dev test"},
	{"fx test", "fx -t target-name test //foo:bar"},
	{"fx test", "fx --dir out/default test"},
	{"fx test", "scripts/fx -t my-device test"},
	{"fx test", ".jiri_root/bin/fx test"},
	{"ffx target list", "ENV_VAR=1 ffx -t dev target list"},
	{"ffx target list", "ffx --machine json target list"},
	{"ffx target list", "fx ffx target list"},
	{"ffx target list", "fx -t my-dev ffx --machine json target list"},
	{"jiri status", "ENV_VAR=1 jiri -q status"},
	{"jiri status", "jiri -j 50 status"},
	{"jiri status", ".jiri_root/bin/jiri -show-progress=false status"},
}

// TestFuchsiaVectors: the allow grants match what Fuchsia's do.
func TestFuchsiaVectors(t *testing.T) {
	n := 0
	for _, v := range fuchsiaVectors {
		if matches(t, v.line, v.cmd) {
			n++
		} else {
			t.Errorf("rule %q does not match %q", v.line, v.cmd)
		}
	}
	t.Logf("%d/%d vectors match", n, len(fuchsiaVectors))
}

// denyMatches is matches for DenyGrants.
func denyMatches(t *testing.T, line, cmd string) bool {
	t.Helper()
	grants, err := DenyGrants(line)
	if err != nil || len(grants) == 0 {
		t.Fatalf("DenyGrants(%q) = %v, %v", line, grants, err)
	}
	for _, g := range grants {
		rx := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"))
		if rx.MatchString(cmd) {
			return true
		}
	}
	return false
}

var denyTests = []struct {
	line, cmd string
	want      bool
}{
	{"git push --force", "git push --force", true},
	{"git push --force", "git push origin main --force", true},
	{"git push --force", "git push --force; echo done", true},
	{"git push --force", "git push --force&&echo done", true},
	{"git push --force", "git push origin --force\necho done", true},
	{"git push --force", "git push --force | tee log", true},
	{"git push --force", "git push --force 2>&1", true},
	{"git push --force", "sudo git push --force", true},
	{"git push --force", "env FOO=1 git push --force", true},
	{"git push --force", "command git push --force", true},
	{"git push --force", "nohup nice -n 5 git push --force", true},
	{"git push --force", "timeout 5m git push --force", true},
	{"git push --force", `\git push --force`, true},
	{"git push --force", "'git' push --force", true},
	{"git push --force", `git "push" --force`, true},
	{"git push --force", "PATH=/x LD_PRELOAD=y git push --force", true},
	{"git push --force", "FOO=$(id) git push --force", true},
	{"git push --force", "git -c core.pager=x push --force", true},
	{"git push --force", "git --exec-path=/x push --force", true},
	{"git push --force", `git -C "a b" --no-pager push --force`, true},
	{"git push --force", "/tmp/x/git push --force", true},
	{"git push --force", "git push origin main", false},
	{"git push --force", "git push --force-with-lease", false},
	{"git push --force", "git pushx --force", false},
	{"git push --force", "echo git push --force", false},
	{"git push --force", "gitx push --force", false},
	{"git push -f", "git push -uf origin main; true", true},
	{"git reset --hard", "git reset --hard HEAD~3 && git status", true},
	{"git reset --hard", "git reset --soft HEAD~3", false},
	{"git clean -f", "git clean -fdx; ls", true},
	{"git clean -f", "git clean -d -x -f", true},
	{"git clean -f", "git clean -n", false},
	{"sed -i", "sed -i s/a/b/ f && echo", true},
	{"sed -i", "sed -n p f", false},
	{"rm -rf /", "rm -rf /", true},
	{"rm -rf /", "rm -rf //", true},
	{"rm -rf /", "rm -rf / home", true},
	{"rm -rf /", "rm -rf /;", true},
	{"rm -rf /", "rm -rf / && echo gone", true},
	{"rm -rf /", "sudo rm -rf /", true},
	{"rm -rf /", "sudo /bin/rm -rf /", true},
	{"rm -rf /", `rm -rf /""`, true},
	{"rm -rf /", "rm 'rm' x", false},
	{"rm -rf /", "rm -rf /var", false},
	{"rm -rf /", "rm -rf ./", false},
	{"rm -rf /", "rmdir -rf /", false},
	{"rm -rf ~", "rm -rf ~", true},
	{"rm -rf ~", "rm -rf ~/", true},
	{"rm -rf ~", "rm -rf ~ ; ls", true},
	{"rm -rf ~", "rm -rf ~/src", false},
	{"git help", "git help; x", true},
	{"fx ota", "fx -t dev ota --no-build", true},
	{"ffx target reboot", "fx -t dev ffx target reboot -b", true},
}

func TestDenyGrants(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, tc := range denyTests {
		key := [2]string{tc.line, tc.cmd}
		if seen[key] {
			t.Errorf("duplicate test case %q %q", tc.line, tc.cmd)
		}
		seen[key] = true
		if got := denyMatches(t, tc.line, tc.cmd); got != tc.want {
			t.Errorf("deny rule %q, command %q: match=%v, want %v", tc.line, tc.cmd, got, tc.want)
		}
	}
	// A deny grant matches everything the allow grant of the same rule does.
	for _, tc := range grantTests {
		if tc.want && !denyMatches(t, tc.line, tc.cmd) {
			t.Errorf("rule %q: allow grant matches %q, deny grant does not", tc.line, tc.cmd)
		}
	}
}

// FuzzGrants: never panics, every grant compiles and is anchored, allow
// grants never match a chained tail, and deny grants match whatever allow
// grants match.
func FuzzGrants(f *testing.F) {
	for _, tc := range grantTests {
		f.Add(tc.line, tc.cmd)
	}
	f.Fuzz(func(t *testing.T, line, cmd string) {
		allow, err := Grants(line)
		if err != nil {
			if _, derr := DenyGrants(line); derr == nil {
				t.Fatalf("Grants(%q) fails but DenyGrants does not", line)
			}
			return
		}
		deny, err := DenyGrants(line)
		if err != nil {
			t.Fatalf("DenyGrants(%q): %v", line, err)
		}
		compile := func(gs []string) []*regexp.Regexp {
			var res []*regexp.Regexp
			for _, g := range gs {
				if strings.HasPrefix(g, "command(regex:") && !strings.HasPrefix(g, "command(regex:^") {
					t.Fatalf("%q: unanchored grant %s", line, g)
				}
				re, ok := strings.CutPrefix(g, "command(regex:")
				if !ok {
					continue // a pass-through grant
				}
				rx, err := regexp.Compile(strings.TrimSuffix(re, ")"))
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				res = append(res, rx)
			}
			return res
		}
		a, d := compile(allow), compile(deny)
		any := func(rs []*regexp.Regexp, s string) bool {
			for _, r := range rs {
				if r.MatchString(s) {
					return true
				}
			}
			return false
		}
		if any(a, cmd) && len(d) > 0 && !any(d, cmd) {
			t.Errorf("rule %q: allow grant matches %q, deny grant does not", line, cmd)
		}
		for _, tail := range []string{"; rm -rf /", " && rm -rf /", " | sh", "\nrm -rf /", " $(rm -rf /)", " `rm -rf /`", " > /etc/passwd"} {
			if any(a, cmd+tail) {
				t.Errorf("rule %q: allow grant matches %q", line, cmd+tail)
			}
		}
	})
}

// TestExpanderOverlay: a checkout's own program facts reach its grants.
func TestExpanderOverlay(t *testing.T) {
	tbl, err := programs.WithOverlays(programs.File{Name: ".agents/config/programs.txt", Data: []byte("[mytool]\nexec --hook\n")})
	if err != nil {
		t.Fatal(err)
	}
	e := NewExpander(tbl)
	for _, tc := range []struct {
		expander *Expander
		cmd      string
		want     bool
	}{
		{e, "mytool build", true},
		{e, "mytool build --hook=x", false},
		{e, "mytool build --ho x", false},
		{builtinExpander(), "mytool build --hook=x", true},
		{e, "git ls-remote --upload-pack=x", false},
	} {
		rule := "mytool build"
		if strings.HasPrefix(tc.cmd, "git") {
			rule = "git ls-remote"
		}
		gs, err := tc.expander.Grants(rule)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, g := range gs {
			re := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"))
			got = got || re.MatchString(tc.cmd)
		}
		if got != tc.want {
			t.Errorf("%q under %q: match=%v, want %v", tc.cmd, rule, got, tc.want)
		}
	}
}

// TestExpanderEnvExec: a name an overlay's table says a program runs
// (env-exec) or runs by (env-runs) is refused in front of that program,
// and only that one.
func TestExpanderEnvExec(t *testing.T) {
	tbl, err := programs.WithOverlays(programs.File{Name: ".agents/config/programs.txt", Data: []byte("[mytool]\nenv-exec TERM LC_HOOK\nenv-runs MYTOOL_*\n")})
	if err != nil {
		t.Fatal(err)
	}
	x := NewExpander(tbl)
	for _, tc := range []struct {
		line, cmd string
		want      bool
	}{
		{"mytool run", "LANG=C mytool run", true},
		{"mytool run", "TERM=x mytool run", false},
		{"mytool run", "LC_HOOK=x mytool run", false},
		{"mytool run", "MYTOOL_HOME=x mytool run", false},
		{"mytool run", "LC_ALL=C mytool run", true},
		{"git status", "TERM=x LC_HOOK=x MYTOOL_HOME=x git status", true},
	} {
		gs, err := x.Grants(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, g := range gs {
			re := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"))
			got = got || re.MatchString(tc.cmd)
		}
		if got != tc.want {
			t.Errorf("%q under %q: match=%v, want %v", tc.cmd, tc.line, got, tc.want)
		}
	}
}

// TestDenyGrantsHome: with the home directory known, a deny rule about ~
// also holds for its absolute path and its parents.
func TestDenyGrantsHome(t *testing.T) {
	e := builtinExpander().WithHome("/home/me")
	for _, tc := range []struct {
		rule, cmd string
		want      bool
	}{
		{"rm -rf ~", "rm -rf ~", true},
		{"rm -rf ~", "rm -rf /home/me", true},
		{"rm -rf ~", "rm -rf /home/me/", true},
		{"rm -rf ~", "rm -rf /home", true},
		{"rm -rf ~", "rm -rf /root", true},
		{"rm -rf ~", "rm -rf /home/", true},
		{"rm -rf ~", "rm -rf /", false},
		{"rm -rf ~", "sudo rm -rf /home/me", true},
		{"rm -rf ~", "rm -rf /home/other", false},
		{"rm -rf ~", "rm -rf /home/me/src", false},
		{"rm -rf ~/*", "rm -rf /home/me/*", true},
		{"rm -rf ~/.ssh", "rm -rf /home/me/.ssh", true},
		{"rm -rf ~/.ssh", "rm -rf /home/.ssh", false},
	} {
		gs, err := e.DenyGrants(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, g := range gs {
			re := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(g, "command(regex:"), ")"))
			got = got || re.MatchString(tc.cmd)
		}
		if got != tc.want {
			t.Errorf("deny %q on %q: match=%v, want %v", tc.rule, tc.cmd, got, tc.want)
		}
	}
	// Without a home, /root still counts, and nothing else changes.
	gs, _ := DenyGrants("rm -rf ~")
	if n := len(gs); n != 3 {
		t.Errorf("DenyGrants(rm -rf ~) without a home: %d grants, want 3 (~, /root, /root/)", n)
	}
}

// TestGrantsVersion holds GrantsVersion to the spelling of grants: when a
// change to the expander changes what these lines expand to, bump
// GrantsVersion and record the new digest here, so that agents-setup
// rewrites the files an older version wrote.
func TestGrantsVersion(t *testing.T) {
	const version, probe = 7, "cae2d164b557aae89e2d7add262201c0"
	h := sha256.New()
	for _, line := range []string{"git status", "ls -la", "rm -rf /", "ffx target list", "go test ./...", "cipd help"} {
		for _, f := range []func(string) ([]string, error){Grants, DenyGrants} {
			grants, err := f(line)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range grants {
				fmt.Fprintf(h, "%d:%s", len(g), g)
			}
		}
	}
	got := hex.EncodeToString(h.Sum(nil)[:16])
	if got != probe || GrantsVersion != version {
		t.Errorf("grants are spelled %s under GrantsVersion %d; recorded %s under %d: bump GrantsVersion and record both", got, GrantsVersion, probe, version)
	}
}
