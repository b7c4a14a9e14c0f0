package agents

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Claude is Claude Code.
var Claude = &Agent{
	Name:   "claude-code",
	unwrap: claudeWrapper,
}

// Claude Code's shell wrapper, as 2.1.332 writes it (the native binary of
// @anthropic-ai/claude-code-linux-x64, its buildExecCommand): it runs
// `<shell> -c -l '<line>'` (`-c` alone when its snapshot is in use), the
// line being parts joined by " && ":
//
//	source <config>/shell-snapshots/snapshot-….sh 2>/dev/null || true
//	\builtin shopt -u extglob 2>/dev/null || true      (zsh: \builtin setopt NO_EXTENDED_GLOB …)
//	{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true
//	{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true
//	eval '<command>' < /dev/null
//	pwd -P >| <tmp>/claude-<id>-cwd
//
// with no source when there is no snapshot, the command quoted as
// '…'"'"'…' when it holds a quote, bare when it is all safe characters,
// and `< /dev/null` left out when it reads its own input. <tmp> is
// $CLAUDE_CODE_TMPDIR, else the temp directory ($TMPDIR, else /tmp).
// Parts that only some settings add (CLAUDE_ENV_FILE's script,
// CLAUDE_CODE_SHELL_PREFIX, the sandbox's TMPDIR, an rm guard that puts a
// directory first on PATH) are not recognised: such a line is decided
// whole. At start Claude Code also runs `env` and a script that writes
// the snapshot; they are no wrapper and are decided as what they are.

// Claude Code's fixed parts, canonical.
var claudeFixed = sync.OnceValue(func() map[string]string {
	const zshOpts = "NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST "
	m := map[string]string{}
	for kind, srcs := range map[string][]string{
		"shopt": {
			`\builtin shopt -u extglob 2>/dev/null`,
			`\builtin setopt ` + zshOpts + `NO_EQUALS 2>/dev/null`,
			`\builtin setopt ` + zshOpts + `NO_RC_QUOTES NO_EQUALS 2>/dev/null`,
			`{ \builtin shopt -u extglob || \builtin setopt ` + zshOpts + `NO_EQUALS; } >/dev/null 2>&1`,
			`{ \builtin shopt -u extglob || \builtin setopt ` + zshOpts + `NO_RC_QUOTES NO_EQUALS; } >/dev/null 2>&1`,
			// Before 2.1.3xx: no \builtin.
			`shopt -u extglob 2>/dev/null`,
			`setopt NO_EXTENDED_GLOB 2>/dev/null`,
		},
		"which":    {`{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1`},
		"unsetenv": {`{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1`},
	} {
		for _, src := range srcs {
			m[canonical(src)] = kind
		}
	}
	return m
})

var (
	claudeSnapshotRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^snapshot-[A-Za-z0-9._-]+\.sh$`) })
	claudeCwdFileRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^claude-[0-9a-f]{1,8}(-[A-Za-z0-9_-]+)?-cwd$`) })
)

// claudeWrapper recognises Claude Code's wrapper: its parts in their
// order, each at most once, the eval and the cwd file last.
func claudeWrapper(l *wrapperLine) (Wrapped, bool) {
	parts, ok := andOrParts(l.f)
	if !ok || len(parts) < 2 {
		return Wrapped{}, false
	}
	// The optional parts, in the order Claude Code joins them.
	order := []string{"source", "shopt", "which", "unsetenv"}
	next := 0
	n := len(parts)
	for _, p := range parts[:n-2] {
		kind := ""
		switch {
		case len(p) != 2 || printed(p[1]) != "true":
			return Wrapped{}, false // every optional part is "x || true"
		case claudeFixed()[printed(p[0])] != "":
			kind = claudeFixed()[printed(p[0])]
		case isClaudeSource(p[0], l.getenv):
			kind = "source"
		default:
			return Wrapped{}, false
		}
		i := next
		for i < len(order) && order[i] != kind {
			i++
		}
		if i == len(order) {
			return Wrapped{}, false // out of order, or twice
		}
		next = i + 1
	}
	// eval '<command>' [< /dev/null]
	ev := parts[n-2]
	if len(ev) != 1 {
		return Wrapped{}, false
	}
	args, ok := callOf(ev[0])
	if !ok || len(args) != 2 || args[0] != "eval" {
		return Wrapped{}, false
	}
	if len(ev[0].Redirs) > 0 {
		if to, ok := redirTo(ev[0], syntax.RdrIn); !ok || to != "/dev/null" {
			return Wrapped{}, false
		}
	}
	// pwd -P >| <tmp>/claude-<id>-cwd
	pw := parts[n-1]
	if len(pw) != 1 {
		return Wrapped{}, false
	}
	pargs, ok := callOf(pw[0])
	if !ok || strings.Join(pargs, " ") != "pwd -P" {
		return Wrapped{}, false
	}
	to, ok := redirTo(pw[0], syntax.RdrClob)
	if !ok || filepath.Clean(to) != to || !claudeCwdFileRE().MatchString(filepath.Base(to)) ||
		filepath.Dir(to) != claudeTempDir(l.getenv) || !freshFile(to) {
		return Wrapped{}, false
	}
	return Wrapped{Command: args[1]}, true
}

// isClaudeSource reports whether s is `source <snapshot> 2>/dev/null`
// (or `.`) of one of Claude Code's snapshots.
func isClaudeSource(s *syntax.Stmt, getenv func(string) string) bool {
	args, ok := callOf(s)
	if !ok || len(args) != 2 || args[0] != "source" && args[0] != "." {
		return false
	}
	if len(s.Redirs) != 1 || s.Redirs[0].N == nil || s.Redirs[0].N.Value != "2" || s.Redirs[0].Op != syntax.RdrOut {
		return false
	}
	if to, ok := staticWord(s.Redirs[0].Word); !ok || to != "/dev/null" {
		return false
	}
	p := args[1]
	if filepath.Clean(p) != p || !claudeSnapshotRE().MatchString(filepath.Base(p)) {
		return false
	}
	return underAgentDir(filepath.Dir(p), "shell-snapshots", getenv("CLAUDE_CONFIG_DIR"), getenv("HOME"), ".claude")
}

// claudeTempDir is where Claude Code puts its cwd files:
// $CLAUDE_CODE_TMPDIR, else the temp directory as Node reads it ($TMPDIR
// without trailing slashes, else /tmp).
func claudeTempDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CODE_TMPDIR"); d != "" {
		return filepath.Clean(d)
	}
	return tempDir(getenv)
}
