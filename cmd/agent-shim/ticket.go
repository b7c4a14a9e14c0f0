package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// Hook tickets (package tickets): the hook leaves one for a shell call it
// does not deny, shell mode takes it.

// ticketNow is the clock of tickets; tests move it.
var ticketNow = time.Now

// stateDir is the shim's protected state directory: the directory of the
// approval log, $XDG_STATE_HOME/agent-shim.
func stateDir(getenv func(string) string) (string, error) {
	p, err := approvals.Path(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

// ticketStore is the ticket directory of the shim's state directory.
func (e *env) ticketStore() (tickets.Store, error) {
	dir, err := stateDir(e.getenv)
	return tickets.Store{Dir: dir, Now: ticketNow}, err
}

// wantSeenTickets: see tickets.WantSeen.
func wantSeenTickets(g *gate.Gate) bool { return tickets.WantSeen(g) }

// recordTicket is hook mode's half: it leaves a ticket for a shell call
// the hook did not deny. Other tools, and denied calls, leave none.
func (e *env) recordTicket(ag *agents.Agent, in *hookInput, d gate.Decision) error {
	if !gate.IsCommandTool(in.ToolName) {
		return nil
	}
	kind := tickets.KindFor(d, ag.Asks)
	if kind == "" {
		return nil
	}
	cmd, err := in.Command()
	if err != nil {
		return err
	}
	st, err := e.ticketStore()
	if err != nil {
		return err
	}
	t := tickets.Ticket{Kind: kind, Agent: ag.Name, Session: in.SessionID, Dir: tickets.RealDir(in.Dir()), Command: cmd}
	if t.Dir == "" { // no cwd given: the agent runs its hooks where it works
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("finding the working directory: %w", err)
		}
		t.Dir = tickets.RealDir(wd)
	}
	return st.Leave(t)
}

// shellSession is the agent session shell mode runs in, when the agent
// says: Claude Code gives its Bash commands CLAUDE_CODE_SESSION_ID (since
// 2.1.132, the session_id its hooks get; anthropics/claude-code#56879),
// else AGENT_SHIM_SESSION; "" when unknown.
func (e *env) shellSession() string {
	if s := e.getenv("CLAUDE_CODE_SESSION_ID"); s != "" {
		return s
	}
	return e.getenv("AGENT_SHIM_SESSION")
}

// takeTicket is shell mode's half: it takes a valid ticket for line (or
// for the command inside an agent's wrapper of it, see agents.Unwrap) in
// the working directory, and returns it with the command it was for. No
// valid ticket is (nil, "", nil).
func (e *env) takeTicket(line string) (*tickets.Ticket, string, error) {
	st, err := e.ticketStore()
	if err != nil {
		return nil, "", err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("finding the working directory: %w", err)
	}
	cands := []string{line}
	if w, ok := agents.Unwrap(line, "", e.getenv); ok {
		cands = append(cands, w.Command)
	}
	return st.Take(cands, wd, e.shellSession(), os.Getppid())
}

// errUnseen is shell mode's refusal under agentShim.requireHook.
var errUnseen = errors.New("no hook call has seen this command (agentShim.requireHook): the agent's hook died, timed out or was bypassed")

// ticketGate is shell mode's use of tickets, before it decides cmd. It
// returns the line to decide (the command itself when the line is an
// agent's wrapper of a command the hook saw) and whether an ask ticket
// already approves it; a deny rule still refuses it. Under
// agentShim.requireHook a line without a ticket is refused.
func (e *env) ticketGate(cfg *lazyConfig, cmd string) (line string, approved bool, err error) {
	f, err := cfg.load()
	if err != nil {
		return "", false, err
	}
	requireHook := f.Shim.RequireHook
	t, inner, err := e.takeTicket(cmd)
	if err != nil {
		if requireHook {
			return "", false, err
		}
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
		return cmd, false, nil
	}
	if t == nil {
		if requireHook {
			return "", false, &runlayer.Hinted{Err: errUnseen, Hint: "check the hook with 'agent-shim doctor'"}
		}
		return cmd, false, nil
	}
	return inner, t.Kind == tickets.Ask, nil
}
