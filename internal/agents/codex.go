package agents

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Codex is OpenAI's Codex CLI.
var Codex = &Agent{
	Name:   "codex",
	unwrap: codexWrapper,
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
