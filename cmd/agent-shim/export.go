package main

import (
	"fmt"
	"io"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/sessions"
	"github.com/agent-shim/agent-shim/internal/telemetry"
	"github.com/agent-shim/agent-shim/internal/tickets"
)

// exportDecisions starts the decision export (agent-shim-export, beside
// this program) when it is configured (config.json's agentShim.telemetry
// or the OTEL_* variables) and due: one stat of a stamp file per hook
// call, the settings read and a detached start at most once per interval
// (package telemetry). It runs after the answer is written, and nothing
// it does changes the answer; a failure is a warning.
func (e *env) exportDecisions() { e.exportDecisionsFor("") }

// exportDecisionsFor is exportDecisions with the config file given by
// --config ("" for the agent's config.json).
func (e *env) exportDecisionsFor(configFlag string) {
	if !logDecisions {
		return
	}
	path, err := decisionlog.Path(e.getenv)
	if err != nil {
		return
	}
	cfg, err := e.configPath(configFlag)
	if err != nil {
		cfg = "" // the variables alone
	}
	if err := telemetry.Kick(e.getenv, path, cfg, time.Now()); err != nil && !e.underRun() {
		// (A hook under agent-shim run cannot write the state
		// directory; the run itself starts the export.)
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
	}
}

// underRun reports whether this process runs under agent-shim run
// (tickets.Store.UnderRun): a few reads of /proc, on failure paths only.
func (e *env) underRun() bool {
	dir, err := sessions.StateDir(e.getenv)
	return err == nil && (tickets.Store{Dir: dir}).UnderRun()
}

// exportWhile starts the decision export now and every interval until
// stop is called, then once more: agent-shim run's, whose tree's hooks
// cannot start it.
func (e *env) exportWhile(configFlag string) (stop func()) {
	e.exportDecisionsFor(configFlag)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(telemetry.DefaultInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				// Quiet: the tree writes the same stream; the last
				// start below says what fails.
				quiet := *e
				quiet.stderr = io.Discard
				quiet.exportDecisionsFor(configFlag)
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		e.exportDecisionsFor(configFlag)
	}
}
