package agents

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agent-shim/agent-shim/hooks"
	"github.com/agent-shim/agent-shim/internal/fileedit"
	"mvdan.cc/sh/v3/syntax"
)

// The hook command install writes: the shim by the absolute path of the
// binary (a bare "agent-shim" fails with 127 where PATH lacks it, which
// every agent reads as "go ahead"), and for an agent that fails open, the
// shim inside a guard that turns every failure into a block.

// HookCommand is the command line of a's hook running the shim at exe
// (with --config cfg when cfg is set): guarded when the agent fails open.
func (a *Agent) HookCommand(exe, cfg string) string {
	inner := a.PlainCommand(exe, cfg)
	if a.FailsOpen {
		return Guarded(hookGuard(), inner)
	}
	return inner
}

// PlainCommand is the shim's own command line for a's hook.
func (a *Agent) PlainCommand(exe, cfg string) string { return plainCommand(a.Name, exe, cfg) }

func plainCommand(name, exe, cfg string) string {
	argv := []string{exe, "hook", name}
	if cfg != "" {
		argv = append(argv, "--config", cfg)
	}
	return hooks.CommandLine(argv)
}

// GuardSeconds bounds the guarded shim's run: under the agents' own hook
// timeout (HookTimeout), so that the guard, not the agent, ends a hung
// shim, and the call is blocked instead of let through. (A variable for
// the tests that wait it out.)
var GuardSeconds = 20

// The guards: how the hook command bounds the shim's time. Linux has
// coreutils' (or busybox's) timeout; macOS has none by default, but has
// perl, which forks the shim into a process group of its own, as timeout
// does, kills the group with SIGKILL past the time (a child left holding
// the output open would keep the hook waiting) and exits 124. (A Go
// program ignores the SIGALRM that perl's alarm alone would send it.)
func guardTimeout() string { return fmt.Sprintf("timeout -k 2 %d", GuardSeconds) }

func guardPerl() string {
	return fmt.Sprintf(`perl -e 'defined($p=fork)or exit 125;if(!$p){setpgrp;exec@ARGV;exit 127}setpgrp $p,$p;$SIG{ALRM}=sub{kill 9,-$p;exit 124};alarm %d;waitpid $p,0;exit($?&127?128+($?&127):$?>>8)'`, GuardSeconds)
}

// hookGuard is the guard HookCommand uses on this system.
var hookGuard = map[bool]func() string{true: guardPerl, false: guardTimeout}[runtime.GOOS == "darwin"]

// GuardFailure is the message a guarded hook writes when the shim failed.
const GuardFailure = "agent-shim failed: blocking"

// Guarded runs inner under guard and turns every failure — the shim
// missing (127), crashing, exiting non-zero, killed, or past its time —
// into exit 2 with a line of text on stderr: Codex blocks on exit 2, and
// Gemini CLI denies on an exit of 2 or more with output that is not
// JSON. The shim's stdout is kept back until it succeeded, so that a
// half-written answer of a failed run never reaches the agent; an exit 2
// of the shim's own (its blocking answer) stays exit 2.
func Guarded(guard, inner string) string {
	return "out=$(" + guard + " " + inner + `) && printf '%s\n' "$out" || { echo '` + GuardFailure + `' >&2; exit 2; }`
}

// Ours reads a hook command of agent-shim's for a: the shim's path, its
// --config, and whether the command is guarded. A command is ours when
// it is the plain command line (any quoting) or exactly one of the
// guarded forms around it.
func (a *Agent) Ours(cmd string) (exe, cfg string, guarded, ok bool) { return ours(a.Name, cmd) }

// ours is Ours for the agent called name.
func ours(name, cmd string) (exe, cfg string, guarded, ok bool) {
	if words := commandWords(cmd); words != nil {
		exe, cfg, ok = shimArgs(name, words)
		return exe, cfg, false, ok
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "", "", false, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		call, isCall := n.(*syntax.CallExpr)
		if ok || !isCall {
			return !ok
		}
		words := literalWords(call.Args)
		for i := range words {
			if e, c, found := shimArgs(name, words[i:]); found {
				exe, cfg, ok = e, c, true
				return false
			}
		}
		return true
	})
	if !ok {
		return "", "", false, false
	}
	inner := plainCommand(name, exe, cfg)
	for _, g := range []func() string{guardTimeout, guardPerl} {
		if cmd == Guarded(g(), inner) {
			return exe, cfg, true, true
		}
	}
	return "", "", false, false
}

// IsOurs reports whether a hook command runs some agent-shim's hook for
// a, plain or guarded.
func (a *Agent) IsOurs(cmd string) bool { return isOurs(a.Name, cmd) }

func isOurs(name, cmd string) bool {
	_, _, _, ok := ours(name, cmd)
	return ok
}

// shimArgs reads "<…/agent-shim…> hook <agent> [--config FILE]".
func shimArgs(name string, words []string) (exe, cfg string, ok bool) {
	if len(words) < 3 || !strings.HasPrefix(filepath.Base(words[0]), "agent-shim") || words[1] != "hook" || words[2] != name {
		return "", "", false
	}
	if len(words) == 5 && words[3] == "--config" {
		cfg = words[4]
	}
	return words[0], cfg, true
}

// commandWords splits a simple command line into its words, quotes
// removed; nil when it is not one simple command of literal words.
func commandWords(cmd string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || f.Stmts[0].Redirs != nil {
		return nil
	}
	return literalWords(call.Args)
}

// literalWords returns the words, quotes removed; nil when one is not
// literal.
func literalWords(args []*syntax.Word) []string {
	var words []string
	for _, w := range args {
		var sb strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				sb.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
			case *syntax.SglQuoted:
				sb.WriteString(p.Value)
			case *syntax.DblQuoted:
				if len(p.Parts) > 1 {
					return nil
				}
				if len(p.Parts) == 1 {
					l, ok := p.Parts[0].(*syntax.Lit)
					if !ok {
						return nil
					}
					sb.WriteString(l.Value)
				}
			default:
				return nil
			}
		}
		words = append(words, sb.String())
	}
	return words
}

// Hook is a handler of ours found in an agent's settings.
type Hook struct {
	Command string
	// Matcher is its group's matcher.
	Matcher string
	// Group and Index place it: the group in the event's array, the
	// handler in the group.
	Group, Index int
	// Handler is the handler's object.
	Handler *fileedit.Value
	// GroupValue is its group's object.
	GroupValue *fileedit.Value
}

// FindHook returns the first hook command of ours for event in the
// settings data (parsed as root).
func (a *Agent) FindHook(data []byte, root *fileedit.Value, event string) (Hook, bool) {
	arr := root.Member("hooks").Member(event)
	if arr == nil || arr.Kind != '[' {
		return Hook{}, false
	}
	for gi, g := range arr.Elems {
		hs := g.Member("hooks")
		if hs == nil || hs.Kind != '[' {
			continue
		}
		for hi, h := range hs.Elems {
			cv := h.Member("command")
			if cv == nil {
				continue
			}
			c := fileedit.String(data, cv)
			if !a.IsOurs(c) {
				continue
			}
			m := ""
			if mv := g.Member("matcher"); mv != nil {
				m = fileedit.String(data, mv)
			}
			return Hook{Command: c, Matcher: m, Group: gi, Index: hi, Handler: h, GroupValue: g}, true
		}
	}
	return Hook{}, false
}

// CatchAll reports whether a hook group's matcher matches every tool.
func CatchAll(m string) bool { return m == "" || m == "*" || m == ".*" }
