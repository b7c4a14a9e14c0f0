package main

import (
	"fmt"
	"os"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// Hook tickets (package tickets): the hook leaves one for a shell call it
// does not deny, shell mode takes it.

// ticketNow is the clock of tickets; tests move it.
var ticketNow = time.Now

// stateDir is the shim's protected state directory: the directory of the
// approval log, $XDG_STATE_HOME/agent-shim.
func stateDir(getenv func(string) string) (string, error) { return sessions.StateDir(getenv) }

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
