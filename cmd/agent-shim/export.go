package main

import (
	"fmt"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/telemetry"
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
	if err := telemetry.Kick(e.getenv, path, cfg, time.Now()); err != nil {
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
	}
}
