package main

import "strings"

// The agents' wrappers as they write them, around cmd, for the shell-mode
// tests (the recognisers and their own tests: internal/agents).
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
