package main

import (
	"context"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// shim is a gate built for one tool call, with what the front ends keep
// around it (sessions.Call): the config it was read from, the approval
// log and the session.
type shim struct {
	g       *gate.Gate
	config  string // absolute path of config.json
	audit   *sessions.Audit
	session *sessions.Session
	c       *sessions.Call
}

// openOptions say what a gate is built for.
type openOptions struct {
	config   string // --config; "" is the agent's default
	cwd      string // the agent's working directory; "" is ours
	dir      string // where the call runs, if not cwd (relative to cwd)
	session  string // the session id; "" is AGENT_SHIM_SESSION, else the parent process
	prompter gate.Prompter
	layer    bool // the lines run under the run-time layer (explain --runtime)
}

// open builds the gate for one call from config.json (sessions.Open).
func (e *env) open(ctx context.Context, o openOptions) (*shim, error) {
	c, err := sessions.Open(ctx, sessions.Options{Config: o.config, Cwd: o.cwd, Dir: o.dir, Session: o.session,
		Prompter: o.prompter, Layer: o.layer, Getenv: e.getenv, Warn: e.stderr})
	if err != nil {
		return nil, err
	}
	return &shim{g: c.Gate, config: c.Config, audit: c.Audit, session: c.Session, c: c}, nil
}

func (s *shim) close() { s.audit.Close() }

// projectRoot: see sessions.ProjectRoot.
func (e *env) projectRoot(dir string) string { return sessions.ProjectRoot(dir, e.getenv) }

// lockWait bounds how long a write waits for the lock of config.json or
// of a session file.
const lockWait = sessions.LockWait
