package main

import (
	"time"

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
