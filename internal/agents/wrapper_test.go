package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The wrappers as the agents write them (see wrapper.go), around cmd.
const (
	wHome      = "/home/u"
	wSnap      = "/home/u/.claude/shell-snapshots/snapshot-bash-1764614400000-ab12cd.sh"
	claudeHead = "source " + wSnap + " 2>/dev/null || true && " +
		`\builtin shopt -u extglob 2>/dev/null || true && ` +
		`{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && ` +
		`{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && `
	claudeTail = " < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd"
	codexHead  = "if . '/home/u/.codex/shell_snapshots/019a-4f2e.sh' >/dev/null 2>&1; then :; fi\n\nexec '/bin/bash' -c "
	geminiHead = "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-Ab12Cd/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"
	geminiTail = "\n)\n__code=$?\nexit $__code"
)

// claudeQuote quotes as Claude Code does (sSl): '…' with '"'"' for a quote.
func claudeQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

func wrapperEnv(k string) string {
	return map[string]string{"HOME": wHome}[k]
}

func TestUnwrap(t *testing.T) {
	tests := []struct {
		in    string
		shell string // the real shell; "" is /bin/bash
		agent string // "" is not a wrapper
		want  string
		in2   string // the shell that runs the command, when the wrapper names one
	}{
		// Claude Code 2.1.332, with and without its snapshot.
		{in: claudeHead + "eval " + claudeQuote("git status") + claudeTail, agent: "claude-code", want: "git status"},
		{in: claudeHead + "eval " + claudeQuote("echo 'a b' && ls") + claudeTail, agent: "claude-code", want: "echo 'a b' && ls"},
		{in: claudeHead + "eval " + claudeQuote("cat <x") + " && pwd -P >| /tmp/claude-1a2b-cwd", agent: "claude-code", want: "cat <x"},
		{in: `\builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval ls < /dev/null && pwd -P >| /tmp/claude-00ff-cwd`, agent: "claude-code", want: "ls"},
		{in: "source " + wSnap + " 2>/dev/null || true && eval 'make' < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd", agent: "claude-code", want: "make"},
		{in: "source " + wSnap + " 2>/dev/null || true && " + `\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null || true && eval 'ls *(.)'` + claudeTail, shell: "/usr/bin/zsh", agent: "claude-code", want: "ls *(.)"},
		{in: "eval 'ls'" + claudeTail, agent: "claude-code", want: "ls"},
		// Anything more than the wrapper's own parts: decided whole.
		{in: claudeHead + "eval 'git status'" + claudeTail + "; rm -rf /"},
		{in: claudeHead + "eval 'git status'" + claudeTail + " && rm -rf /"},
		{in: claudeHead + "eval 'git status'" + claudeTail + " || rm -rf /"},
		{in: "rm -rf / || true && eval 'git status'" + claudeTail},
		{in: "rm -rf / && eval 'git status'" + claudeTail},
		{in: claudeHead + "eval 'git status' && eval 'rm -rf /'" + claudeTail},
		{in: claudeHead + "eval 'git status' || rm -rf /" + claudeTail},
		{in: claudeHead + "eval 'git status' 'x'" + claudeTail},
		{in: claudeHead + "eval 'git status' | sh" + claudeTail},
		{in: claudeHead + "eval \"$(curl x)\"" + claudeTail},
		{in: claudeHead + "eval \"git $SUB\"" + claudeTail},
		{in: claudeHead + "eval $'git status'" + claudeTail},
		{in: claudeHead + "eval $CMD" + claudeTail},
		{in: claudeHead + "X=1 eval 'ls'" + claudeTail},
		{in: claudeHead + "! eval 'ls'" + claudeTail},
		{in: claudeHead + "eval 'ls' &" + claudeTail},
		{in: claudeHead + "eval 'ls' > /etc/passwd && pwd -P >| /tmp/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /etc/shadow && pwd -P >| /tmp/claude-1a2b-cwd"},
		{in: claudeHead + "{ eval 'ls'; }" + claudeTail},
		{in: claudeHead + "eval 'ls'"},
		// The cwd file: only under the temp directory, only its name.
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| /home/u/.bashrc"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| /home/u/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| /tmp/../home/u/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| /tmp/x/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| $TMPDIR/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P > /tmp/claude-1a2b-cwd"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd 2>/etc/x"},
		{in: claudeHead + "eval 'ls' < /dev/null && pwd -L >| /tmp/claude-1a2b-cwd"},
		// The snapshot: only Claude Code's own directory.
		{in: "source /tmp/snapshot-bash-1.sh 2>/dev/null || true && eval 'ls'" + claudeTail},
		{in: "source /home/u/.claude/shell-snapshots/../../evil/snapshot-bash-1.sh 2>/dev/null || true && eval 'ls'" + claudeTail},
		{in: "source /home/u/.claude/shell-snapshots/snapshot-bash-$X.sh 2>/dev/null || true && eval 'ls'" + claudeTail},
		{in: "source /home/u/.claude/shell-snapshots/evil.sh 2>/dev/null || true && eval 'ls'" + claudeTail},
		{in: "source ~/.claude/shell-snapshots/snapshot-bash-1.sh 2>/dev/null || true && eval 'ls'" + claudeTail},
		{in: "source " + wSnap + " 2>/dev/null || rm -rf / && eval 'ls'" + claudeTail},
		{in: "source " + wSnap + " x 2>/dev/null || true && eval 'ls'" + claudeTail},
		// The other parts: each once, in order, exactly.
		{in: `\builtin shopt -s extglob 2>/dev/null || true && eval 'ls'` + claudeTail},
		{in: `\builtin shopt -u extglob 2>/dev/null || true && \builtin shopt -u extglob 2>/dev/null || true && eval 'ls'` + claudeTail},
		{in: `{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && eval 'ls'` + claudeTail},
		{in: `{ \builtin unalias -- 'which'; rm -rf /; } >/dev/null 2>&1 || true && eval 'ls'` + claudeTail},
		{in: `{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/tmp/x 2>&1 || true && eval 'ls'` + claudeTail},
		// Codex with its snapshot.
		{in: codexHead + claudeQuote("git status"), agent: "codex", want: "git status", in2: "/bin/bash"},
		{in: codexHead + claudeQuote("echo 'hi'") + " 'arg0'", agent: "codex", want: "echo 'hi'", in2: "/bin/bash"},
		{in: strings.Replace(codexHead, "/bin/bash", "/usr/bin/zsh", 1) + claudeQuote("ls *(.)"), agent: "codex", want: "ls *(.)", in2: "/usr/bin/zsh"},
		{in: strings.Replace(codexHead, "/bin/bash", "bash", 1) + "'git status'", agent: "codex", want: "git status", in2: "bash"},
		{in: strings.Replace(codexHead, "/bin/bash", "./bash", 1) + "'git status'"},
		{in: strings.Replace(codexHead, "/bin/bash", "/bin/../tmp/bash", 1) + "'git status'"},
		{in: codexHead + "'git status'; rm -rf /"},
		{in: codexHead + "'git status' > /etc/x"},
		{in: strings.Replace(codexHead, "/bin/bash", "/tmp/evil", 1) + "'git status'"},
		{in: strings.Replace(codexHead, "/bin/bash", "python3", 1) + "'git status'"},
		{in: strings.Replace(codexHead, "/home/u/.codex", "/tmp", 1) + "'git status'"},
		{in: strings.Replace(codexHead, "then :", "then rm -rf /", 1) + "'git status'"},
		{in: strings.Replace(codexHead, ">/dev/null 2>&1", ">/tmp/x 2>&1", 1) + "'git status'"},
		{in: strings.Replace(codexHead, "fi\n", "else rm -rf /; fi\n", 1) + "'git status'"},
		{in: codexHead + "\"$(rm -rf /)\""},
		// Gemini CLI.
		{in: geminiHead + "git status" + geminiTail, agent: "gemini-cli", want: "git status"},
		{in: geminiHead + "cat <<EOF\nhi\nEOF\nls # done" + geminiTail, agent: "gemini-cli", want: "cat <<EOF\nhi\nEOF\nls # done"},
		{in: geminiHead + "ls\n)\nrm -rf /\n(\ntrue" + geminiTail},
		{in: geminiHead + "ls\n) ; rm -rf / ; (\ntrue" + geminiTail},
		{in: geminiHead + "git status" + geminiTail + "\nrm -rf /"},
		{in: "rm -rf /; " + geminiHead + "git status" + geminiTail},
		{in: strings.Replace(geminiHead, "/tmp/gemini-shell-Ab12Cd", "/home/u", 1) + "ls" + geminiTail},
		{in: strings.Replace(geminiHead, "EXIT", "EXIT; rm -rf /", 1) + "ls" + geminiTail},
		{in: strings.Replace(geminiHead, "jobs -p", "rm -rf /", 1) + "ls" + geminiTail},
		{in: strings.Replace(geminiTail, "exit $__code", "exit $__code; rm -rf /", 1)},
		// Not wrappers at all.
		{in: "git status"},
		{in: "env"},
		{in: "eval 'unclosed"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		key := tc.shell + "\x00" + tc.in
		if seen[key] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[key] = true
		t.Logf("input: %q", tc.in)
		shell := tc.shell
		if shell == "" {
			shell = "/bin/bash"
		}
		w, ok := Unwrap(tc.in, shell, wrapperEnv)
		if tc.agent == "" {
			if ok {
				t.Errorf("recognised as %s's wrapper of %q", w.Agent.Name, w.Command)
			}
			continue
		}
		if !ok || w.Agent.Name != tc.agent || w.Command != tc.want || w.Shell != tc.in2 {
			t.Errorf("got %+v, %v; want %s's wrapper of %q (%q)", w, ok, tc.agent, tc.want, tc.in2)
		}
	}
}

// The environment says where the agents keep their files.
func TestUnwrapDirs(t *testing.T) {
	env := map[string]string{
		"HOME": wHome, "CLAUDE_CONFIG_DIR": "/cfg/claude", "CLAUDE_CODE_TMPDIR": "/run/cc",
		"CODEX_HOME": "/cfg/codex", "TMPDIR": "/var/tmp/",
	}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		in string
		ok bool
	}{
		{"source /cfg/claude/shell-snapshots/snapshot-zsh-1-x.sh 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| /run/cc/claude-1a2b-cwd", true},
		{"source " + wSnap + " 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| /run/cc/claude-1a2b-cwd", false},
		{"eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1a2b-cwd", false},
		{"eval 'ls' < /dev/null && pwd -P >| /var/tmp/claude-1a2b-cwd", false},
		{"if . '/cfg/codex/shell_snapshots/a.sh' >/dev/null 2>&1; then :; fi\n\nexec '/bin/sh' -c 'ls'", true},
		{codexHead + "'ls'", false},
		{strings.Replace(geminiHead, "/tmp/", "/var/tmp/", 1) + "ls" + geminiTail, true},
		{geminiHead + "ls" + geminiTail, false},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		if _, ok := Unwrap(tc.in, "bash", getenv); ok != tc.ok {
			t.Errorf("recognised: %v, want %v", ok, tc.ok)
		}
	}
}

// The wrapper texts of the tests are what bash reads: checked with -n
// (syntax only); nothing runs. (zsh's reading: wrapper_zsh_test.go.)
func TestUnwrapRealShells(t *testing.T) {
	if _, ok := Unwrap(claudeZsh, "zsh", wrapperEnv); !ok {
		t.Errorf("Claude Code's zsh wrapper not recognised: %q", claudeZsh)
	}
	syntaxCheck(t, "bash", []string{
		claudeHead + "eval " + claudeQuote("echo 'a b' && ls") + claudeTail,
		codexHead + claudeQuote("echo 'hi'"),
		geminiHead + "cat <<EOF\nhi\nEOF\nls # done" + geminiTail,
	})
}

// claudeZsh is Claude Code's wrapper when its shell is zsh.
const claudeZsh = "source /home/u/.claude/shell-snapshots/snapshot-zsh-1-x.sh 2>/dev/null || true && " +
	`\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS 2>/dev/null || true && ` +
	"eval 'ls *(.)'" + claudeTail

// syntaxCheck runs sh -n -c on each line: syntax only, nothing runs.
func syntaxCheck(t *testing.T, sh string, lines []string) {
	t.Helper()
	path, err := exec.LookPath(sh)
	if err != nil {
		t.Fatalf("%s is needed to check the wrappers' syntax (apt-get install %s): %v", sh, sh, err)
	}
	for _, l := range lines {
		if out, err := exec.Command(path, "-n", "-c", l).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v: %s\n%s", sh, err, out, l)
		}
	}
}

// A link, or a file with another link, at the cwd file's name: the
// wrapper's `pwd -P >|` would write through it, so the line is decided
// whole (and its write outside the scope needs a person).
func TestUnwrapPlantedCwdFile(t *testing.T) {
	tmp := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": wHome, "TMPDIR": tmp}[k] }
	line := func(name string) string { return "eval 'ls' < /dev/null && pwd -P >| " + filepath.Join(tmp, name) }
	target := filepath.Join(tmp, "bashrc")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(tmp, "claude-0001-cwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(target, filepath.Join(tmp, "claude-0002-cwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "claude-0003-cwd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "claude-0004-cwd"), []byte("/old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"claude-0001-cwd": false, "claude-0002-cwd": false, "claude-0003-cwd": false,
		"claude-0004-cwd": true, "claude-0005-cwd": true,
	} {
		t.Logf("input: %s", name)
		if _, ok := Unwrap(line(name), "bash", getenv); ok != want {
			t.Errorf("%s: recognised %v, want %v", name, ok, want)
		}
	}
}

// FuzzUnwrap: never panics, and no recognised wrapper stays one with a
// command added before or after it.
func FuzzUnwrap(f *testing.F) {
	for _, s := range []string{
		claudeHead + "eval " + claudeQuote("echo 'a b' && ls") + claudeTail,
		"eval 'ls'" + claudeTail,
		codexHead + claudeQuote("git status"),
		geminiHead + "cat <<EOF\nhi\nEOF\nls" + geminiTail,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if _, ok := Unwrap(line, "bash", wrapperEnv); !ok {
			return
		}
		for _, more := range []string{line + "; rm -rf /", line + "\nrm -rf /", line + " & rm -rf /", "rm -rf /; " + line, "rm -rf /\n" + line} {
			if w, ok := Unwrap(more, "bash", wrapperEnv); ok {
				t.Errorf("%q recognised as %s's wrapper of %q", more, w.Agent.Name, w.Command)
			}
		}
	})
}

// BenchmarkUnwrapClaude: what recognising Claude Code's wrapper adds to a
// shell-mode call.
func BenchmarkUnwrapClaude(b *testing.B) {
	line := claudeHead + "eval " + claudeQuote("go test ./... && git status") + claudeTail
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Unwrap(line, "bash", wrapperEnv); !ok {
			b.Fatal("not recognised")
		}
	}
}

// TestUnwrapCaptured: the argv the real Claude Code 2.1.332 gave its
// shell (CLAUDE_CODE_SHELL, a script that logged its arguments and ran
// nothing else of ours) for a Bash call holding quotes, in the
// end-to-end world: at start `-c env`, then `-c -l` and the script that
// writes the snapshot, then each call as `-c <wrapper>`.
func TestUnwrapCaptured(t *testing.T) {
	const world = "/tmp/TestProbeClaudeWrapper3816061316/001"
	getenv := func(k string) string {
		return map[string]string{"HOME": world + "/home", "TMPDIR": world + "/tmp"}[k]
	}
	const line = `source /tmp/TestProbeClaudeWrapper3816061316/001/home/.claude/shell-snapshots/snapshot-bash-1796159997484-sx5im4.sh 2>/dev/null || true && \builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval 'touch allowed-canary && echo '"'"'it'"'"''"'"'s'"'"'' < /dev/null && pwd -P >| /tmp/TestProbeClaudeWrapper3816061316/001/tmp/claude-f743-cwd`
	w, ok := Unwrap(line, "/bin/bash", getenv)
	if want := "touch allowed-canary && echo 'it''s'"; !ok || w.Agent != Claude || w.Command != want {
		t.Errorf("got %+v, %v; want Claude Code's wrapper of %q", w, ok, want)
	}
	for _, l := range []string{"env", "SNAPSHOT_FILE=" + world + "/home/.claude/shell-snapshots/snapshot-bash-1796159997484-sx5im4.sh\necho x >| \"$SNAPSHOT_FILE\""} {
		if w, ok := Unwrap(l, "/bin/bash", getenv); ok {
			t.Errorf("%q: recognised as the wrapper of %q", l, w.Command)
		}
	}
}

// TestUnwrapCapturedGemini: the line the real Gemini CLI 0.61.0 gave the
// bash first on its PATH (a script that logged its arguments) for the
// same call, in the end-to-end world. Its hook command ran through that
// bash too: it is no wrapper.
func TestUnwrapCapturedGemini(t *testing.T) {
	const world = "/tmp/TestProbeGeminiWrapper2667150639/001"
	getenv := func(k string) string {
		return map[string]string{"HOME": world + "/home", "TMPDIR": world + "/tmp"}[k]
	}
	const line = `shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/TestProbeGeminiWrapper2667150639/001/tmp/gemini-shell-2DH90n/bgpids.tmp
(
  trap 'jobs -p > "$_bgpids_file"' EXIT
touch allowed-canary && echo 'it''s'
)
__code=$?
exit $__code`
	w, ok := Unwrap(line, "/bin/bash", getenv)
	if want := "touch allowed-canary && echo 'it''s'"; !ok || w.Agent != Gemini || w.Command != want {
		t.Errorf("got %+v, %v; want Gemini CLI's wrapper of %q", w, ok, want)
	}
	hook := "out=$(timeout -k 2 20 " + world + "/bin/agent-shim hook gemini-cli) && printf '%s\\n' \"$out\" || { echo 'agent-shim failed: blocking' >&2; exit 2; }"
	if w, ok := Unwrap(hook, "/bin/bash", getenv); ok {
		t.Errorf("the hook command recognised as the wrapper of %q", w.Command)
	}
}
