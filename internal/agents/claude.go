package agents

import (
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
	"mvdan.cc/sh/v3/syntax"
)

// Claude is Claude Code.
//
// Its hooks (https://docs.anthropic.com/en/docs/claude-code/hooks,
// "Configuration" and "PreToolUse Decision Control"): ~/.claude/settings.json
// ($CLAUDE_CONFIG_DIR when set), {"hooks": {"PreToolUse": [{"matcher":
// "*", "hooks": [{"type": "command", "command": …, "timeout": seconds}]}]}};
// "*" matches every tool. The input has session_id, cwd,
// hook_event_name, tool_name, tool_input and tool_use_id; the answer is
// {"hookSpecificOutput": {"hookEventName": "PreToolUse",
// "permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason":
// …}} with exit 0. "allow" skips the permission prompt but not Claude's
// deny or ask rules; with no output Claude's own permission rules decide.
// Exit 2 blocks the call, with stderr as the reason. PostToolUse after a
// call the hook answered ask means the person approved it there.
//
// Since 2.1.295 a hook's "onFailure": "block" makes "a hook that can't
// start, times out, or exits with an unexpected code" block the action
// instead of letting it through (the changelog, as quoted in
// https://dev.to/gabrielanhaia/a-claude-code-hook-that-times-out-lets-the-command-through-make-it-fail-closed-1g5k
// and NVIDIA's https://docs.nvidia.com/nemo/guardrails/run-guardrailed-inference/using-hooks-server/claude-code):
// install sets it on PreToolUse. 2.1.332 was seen to block a missing,
// crashing, exiting-127 and hanging hook; 2.1.197 ignores the setting and
// lets the call through (which release between them brought it is not
// known here: the npm package carries no changelog, and the one report
// of 2.1.295 could not be checked), so 2.1.332 is the floor.
//
// Its "env" key sets variables for the session, and CLAUDE_CODE_SHELL the
// shell its Bash tool runs: shell mode. "disableAllHooks" and
// "allowManagedHooksOnly" turn user hooks off. Its managed tier is a
// drop-in in managed-settings.d beside managed-settings.json,
// /etc/claude-code on Linux and /Library/Application Support/ClaudeCode
// on macOS, with the same hooks.
var Claude = &Agent{
	Name:      "claude-code",
	Title:     "Claude Code",
	Program:   "claude",
	Pre:       "PreToolUse",
	Post:      "PostToolUse",
	ShellTool: "Bash",
	Asks:      true,
	answer:    claudeAnswer,
	User: Tier{Path: func(getenv func(string) string) (string, error) {
		return agentFile(getenv, "CLAUDE_CONFIG_DIR", ".claude", "settings.json")
	}},
	Managed: Tier{Path: func(func(string) string) (string, error) {
		dir := "/etc/claude-code"
		if runtime.GOOS == "darwin" {
			dir = "/Library/Application Support/ClaudeCode"
		}
		return filepath.Join(dir, "managed-settings.d", "agent-shim.json"), nil
	}, DropIn: true},
	group: func(cmd, event string) Group {
		h := Handler{Type: "command", Command: cmd, Timeout: HookTimeout}
		if event == "PreToolUse" {
			h.OnFailure = "block" // a hook that dies or times out blocks the call
		}
		return Group{Matcher: "*", Hooks: []Handler{h}}
	},
	OnFailure: true,
	Floor:     Version{2, 1, 332},
	FloorWhat: "onFailure",
	Upgrade:   "npm install -g @anthropic-ai/claude-code@latest",
	Env:       []string{"CLAUDE_CONFIG_DIR"},
	ShellEnv:  "CLAUDE_CODE_SHELL",
	// Its Bash tool runs `<shell> -c -l <wrapper>`, the wrapper
	// writing the working directory to a file under TMPDIR.
	shellProbe: func(tmp string) ([]string, string) {
		cwd := filepath.Join(tmp, "claude-d0c7-cwd")
		return []string{"-c", "-l", `\builtin shopt -u extglob 2>/dev/null || true && { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && eval 'true' < /dev/null && pwd -P >| ` + cwd}, cwd
	},
	stateDirs: func(getenv func(string) string) []string {
		return dirs(getenv, "CLAUDE_CONFIG_DIR", ".claude")
	},
	// Its settings (hooks, env, apiKeyHelper, statusLine, enabled
	// plugins), the hooks people keep beside them, subagents' and
	// skills' hooks, commands' inline bash, plugins' code and where it
	// is, and .claude.json (MCP servers), which $CLAUDE_CONFIG_DIR moves
	// into the directory (else it is ~/.claude.json, which the tree
	// cannot write). It writes plugins/store itself as it starts.
	Guarded: []string{"settings.json", "settings.local.json", ".claude.json", "hooks/", "agents/", "skills/", "commands/",
		"plugins/installed_plugins.json", "plugins/known_marketplaces.json", "plugins/cache/", "plugins/marketplaces/"},
	off:    claudeOff,
	unwrap: claudeWrapper,
	// Its permissions.deny and .ask, in the settings file of the hook.
	Rules:  SecondLine{Compile: secondline.Claude, Member: "permissions"},
	Proven: Version{2, 1, 332},
	// -p in bypassPermissions mode: nobody asked, nothing but the hook,
	// onFailure and the deny rules in the way (IS_SANDBOX: as root it
	// wants to be told it is in one).
	Headless: Headless{
		Args: func(_, prompt string) []string {
			return []string{"-p", prompt, "--permission-mode", "bypassPermissions"}
		},
		Env: func(base string) []string {
			return []string{"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=agent-shim-verify-not-a-key",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
				"DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1"}
		},
		Tools: []string{"Bash"},
		Input: func(_, line string) map[string]any {
			return map[string]any{"command": line, "description": "agent-shim verify"}
		},
		HooksOff: func(settings string) error { return setSetting(settings, false, true, "disableAllHooks") },
	},
}

// claudeAnswer: allow, deny and ask as Claude's permissionDecision;
// Default prints nothing, leaving the call to Claude's own rules.
func claudeAnswer(w io.Writer, a Answer) error {
	if a.Verdict == matcher.Default {
		return nil
	}
	return permissionAnswer(w, verdictWord(a.Verdict), a.Reason)
}

// claudeOff: the switches that turn every user hook off.
func claudeOff(f *Found) []Check {
	var out []Check
	for _, k := range []string{"disableAllHooks", "allowManagedHooksOnly"} {
		if v := f.Root.Member(k); v != nil && string(f.Data[v.Start:v.End]) == "true" {
			out = append(out, Check{Name: k, Status: Fail, Detail: k + " is true: Claude Code runs no hook of yours", Fix: "remove " + k + " from " + f.Path})
		}
	}
	return out
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
