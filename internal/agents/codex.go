package agents

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
	"mvdan.cc/sh/v3/syntax"
)

// Codex is OpenAI's Codex CLI.
//
// Its hooks (https://developers.openai.com/codex/hooks.md): hooks.json
// next to config.toml in ~/.codex ($CODEX_HOME when set), the shape of
// Claude Code's with "timeout" in seconds and no matcher (every tool).
// PreToolUse takes Claude Code's input and honours permissionDecision
// "deny" with a reason; "allow" and "ask" are not supported
// (openai/codex#20756, which would add them, was closed), so allow is
// "exit 0, no output", and ask is answered deny with a reason that says
// how to approve the call. Exit 2 blocks with stderr as the reason.
//
// "Hooks are enabled by default … Use `hooks` as the canonical feature
// key. `codex_hooks` still works as a deprecated alias": install sets
// features.hooks = true in config.toml all the same, for builds that
// still have the flag off. Codex runs a user hook only once it is
// trusted; install writes the trust as Codex's /hooks does
// (codex_config.go). Codex has no switch that makes a failed hook block
// (openai/codex#41979 asks for one): a hook that crashes or times out
// lets the call run, so the command is guarded.
//
// Its managed tier is the hooks of /etc/codex/requirements.toml
// ([[hooks.PreToolUse]] array tables), which Codex runs as managed hooks:
// no trust entry is needed, and a user's config cannot disable them.
var Codex = &Agent{
	Name:      "codex",
	Title:     "Codex",
	Program:   "codex",
	Pre:       "PreToolUse",
	ShellTool: "Bash",
	answer:    codexAnswer,
	User: Tier{Path: func(getenv func(string) string) (string, error) {
		return agentFile(getenv, "CODEX_HOME", ".codex", "hooks.json")
	}},
	Managed: Tier{
		Path: func(func(string) string) (string, error) { return "/etc/codex/requirements.toml", nil },
		toml: &tomlTier{set: setCodexManaged, unset: unsetCodexManaged, hooks: codexManagedHooks},
	},
	group: func(cmd, _ string) Group {
		return Group{Hooks: []Handler{{Type: "command", Command: cmd, Timeout: HookTimeout}}}
	},
	FailsOpen: true,
	Env:       []string{"CODEX_HOME"},
	// Codex 0.169 runs /bin/bash whatever $SHELL says.
	NoShell: "runs its own choice of bash, not a shell it can be given",
	stateDirs: func(getenv func(string) string) []string {
		return dirs(getenv, "CODEX_HOME", ".codex")
	},
	// config.toml (MCP servers, notify, hook trust, profiles), its
	// hooks, its rules, and the .env it loads. It writes skills/.system
	// itself as it starts.
	Guarded:   []string{"config.toml", "hooks.json", "rules/", ".env"},
	companion: codexCompanion,
	unwrap:    codexWrapper,
	// A .rules file in the rules directory of the tier's configuration
	// layer: ~/.codex/rules, /etc/codex/rules.
	Rules: SecondLine{Compile: secondline.Codex, File: func(settings string, _ bool) string {
		return filepath.Join(filepath.Dir(settings), "rules", "agent-shim.rules")
	}},
	Proven: Version{0, 169, 0},
	// codex exec with no sandbox and no approvals, its model a provider
	// of its own given on the command line (-c).
	Headless: Headless{
		Args: func(base, prompt string) []string {
			return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
				"-c", `model="agent-shim-verify"`, "-c", `model_provider="agent-shim-verify"`,
				"-c", `model_providers.agent-shim-verify={name="agent-shim-verify", base_url="` + base + `/v1", wire_api="responses", env_key="AGENT_SHIM_VERIFY_KEY", request_max_retries=0, stream_max_retries=0}`,
				prompt}
		},
		Env:   func(string) []string { return []string{"AGENT_SHIM_VERIFY_KEY=agent-shim-verify-not-a-key"} },
		Tools: []string{"shell_command", "exec_command", "shell"},
		Input: func(tool, line string) map[string]any {
			switch tool {
			case "exec_command":
				return map[string]any{"cmd": line}
			case "shell":
				return map[string]any{"command": []string{"bash", "-lc", line}}
			}
			return map[string]any{"command": line}
		},
		HooksOff: codexTurnHooksOff,
	},
}

// codexAnswer: Codex honours only deny. Allow and Default print nothing
// (Codex's own approval policy and sandbox then apply); ask is a deny that
// says how to approve the call.
func codexAnswer(w io.Writer, a Answer) error {
	switch a.Verdict {
	case matcher.Allow, matcher.Default:
		return nil
	case matcher.Ask:
		return permissionAnswer(w, "deny", needsApproval(a))
	}
	return permissionAnswer(w, "deny", a.Reason)
}

// Codex's shell wrapper (codex-rs/core/src/tools/runtimes/mod.rs,
// maybe_wrap_shell_lc_with_snapshot): `[shell, "-lc", command]`, the
// command itself; with a shell snapshot,
//
//	[user shell, "-c", "if . '<CODEX_HOME>/shell_snapshots/….sh' >/dev/null 2>&1; then :; fi\n\nexec '<shell>' -c '<command>'"]
//
// whose command runs in <shell>. A snapshot preamble that also restores
// variables is not recognised.

// codexShells are the shells Codex execs a command with.
var codexShells = map[string]bool{"bash": true, "zsh": true, "sh": true}

// codexWrapper recognises Codex's snapshot wrapper.
func codexWrapper(l *wrapperLine) (Wrapped, bool) {
	f := l.f
	if len(f.Stmts) != 2 {
		return Wrapped{}, false
	}
	// if . '<snapshot>' >/dev/null 2>&1; then :; fi
	s := f.Stmts[0]
	ic, ok := s.Cmd.(*syntax.IfClause)
	if !plainStmt(s) || !ok || len(s.Redirs) > 0 || ic.Else != nil || len(ic.Cond) != 1 || len(ic.Then) != 1 {
		return Wrapped{}, false
	}
	if printed(ic.Then[0]) != ":" {
		return Wrapped{}, false
	}
	src := ic.Cond[0]
	args, ok := callOf(src)
	if !ok || len(args) != 2 || args[0] != "." || len(src.Redirs) != 2 {
		return Wrapped{}, false
	}
	r0, r1 := src.Redirs[0], src.Redirs[1]
	if to, ok := staticWord(r0.Word); !ok || to != "/dev/null" || r0.Op != syntax.RdrOut || r0.N != nil {
		return Wrapped{}, false
	}
	if to, ok := staticWord(r1.Word); !ok || to != "1" || r1.Op != syntax.DplOut || r1.N == nil || r1.N.Value != "2" {
		return Wrapped{}, false
	}
	p := args[1]
	if filepath.Clean(p) != p || !strings.HasSuffix(p, ".sh") || strings.HasPrefix(filepath.Base(p), ".") ||
		!underAgentDir(filepath.Dir(p), "shell_snapshots", l.getenv("CODEX_HOME"), l.getenv("HOME"), ".codex") {
		return Wrapped{}, false
	}
	// exec '<shell>' -c '<command>' ['<arg>'...]
	ex := f.Stmts[1]
	eargs, ok := callOf(ex)
	if !ok || len(ex.Redirs) > 0 || len(eargs) < 4 || eargs[0] != "exec" || eargs[2] != "-c" {
		return Wrapped{}, false
	}
	// The shell is the session's (an absolute path) or the one the
	// model's argv named (bash, found on PATH).
	sh := eargs[1]
	if !codexShells[filepath.Base(sh)] || sh != filepath.Base(sh) && (!filepath.IsAbs(sh) || filepath.Clean(sh) != sh) {
		return Wrapped{}, false
	}
	return Wrapped{Command: eargs[3], Shell: sh}, true
}
