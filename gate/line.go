package gate

import (
	"fmt"
	"path/filepath"

	"github.com/agent-shim/agent-shim/internal/agents"
	"mvdan.cc/sh/v3/syntax"
)

// DecideLine decides a command line as a shell runs it: shell is the real
// shell's path or name, getenv the environment it runs in (where the
// agents keep their files). An agent's own wrapper around the command
// (Claude Code's snapshot-and-eval line, Codex's exec of a shell, Gemini
// CLI's subshell; see internal/agents) is not decided: the command inside
// it is, returned as cmd. The line is read as the shell reads it: a zsh
// line as `zsh -c '<line>'`, whose script is read as zsh (glob
// qualifiers, =(…), expansion flags), so what only zsh runs is not
// allowed; the same text keys session answers and approvals, so an answer
// for a zsh line is not one for the bash line. dialect is the shell whose
// reading decided ("zsh"), "" for bash's. A line no shell can be given (a
// NUL byte) is denied.
func (g *Gate) DecideLine(line, shell string, getenv func(string) string) (cmd, dialect string, d Decision) {
	cmd, dialect = line, shell
	if w, ok := agents.Unwrap(line, shell, getenv); ok {
		cmd = w.Command
		if w.Shell != "" {
			dialect = w.Shell
		}
	}
	dialect, d = g.decideIn(cmd, dialect)
	return cmd, dialect, d
}

// decideIn decides cmd as shell reads it; dialect is "zsh" when zsh's
// reading decided, "" for bash's.
func (g *Gate) decideIn(cmd, shell string) (dialect string, d Decision) {
	if filepath.Base(shell) != "zsh" {
		return "", g.DecideBash(cmd)
	}
	key, err := dialectLine(cmd, shell)
	if err != nil {
		return "zsh", Decision{Verdict: Deny, Reason: err.Error()}
	}
	return "zsh", g.DecideBash(key)
}

// dialectLine is line as the gate decides it when shell runs it (see
// DecideLine).
func dialectLine(line, shell string) (string, error) {
	if filepath.Base(shell) != "zsh" {
		return line, nil
	}
	q, err := syntax.Quote(line, syntax.LangBash)
	if err != nil { // a NUL byte, which no argv holds
		return "", fmt.Errorf("reading the line as zsh: %w", err)
	}
	return "zsh -c " + q, nil
}
