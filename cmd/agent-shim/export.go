package main

import (
	"fmt"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/telemetry"
)

// exportDecisions starts the decision export (agent-shim-export, beside
// this program) when OTLP export is configured and it is due: one stat of
// a stamp file per hook call, a detached start at most once per interval
// (package telemetry). It runs after the answer is written, and nothing
// it does changes the answer; a failure is a warning.
func (e *env) exportDecisions() {
	if !logDecisions {
		return
	}
	path, err := decisionlog.Path(e.getenv)
	if err != nil {
		return
	}
	if err := telemetry.Kick(e.getenv, path, time.Now()); err != nil {
		fmt.Fprintf(e.stderr, "agent-shim: warning: %v\n", err)
	}
}
