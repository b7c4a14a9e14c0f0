// Package telemetry sends the decision log to an OpenTelemetry collector
// without ever holding up a decision.
//
// The local log (package decisionlog) is the queue. A hook call only
// stats a stamp file (Kick); at most once per interval it reads the
// settings (config.json's agentShim.telemetry through a copy beside the
// log, the OTEL_* variables over it: Resolve) and, when export is on,
// starts the exporter, agent-shim-export, detached, and goes on. The exporter reads
// the log from the position saved in the state directory (Queue), sends
// what it finds, and saves the new position only after the collector
// acknowledged it: a slow or dead collector delays the export, never a
// verdict, and loses no record the local log still holds.
//
// Positions are kept per file, by device and inode, so that rotation
// (decisions.jsonl becomes decisions.jsonl.1) and a writer that appends to
// the renamed file after it are both followed. A record may be sent twice
// (the collector acknowledged, the exporter died before saving); none is
// skipped.
//
// This package links no network code: the hook imports it.
package telemetry

import (
	"path/filepath"
	"time"
)

// Files in the state directory, beside decisions.jsonl.
const (
	CursorName = "export.json"  // positions exported so far
	StampName  = "export.stamp" // its time: when the exporter is next due
	LockName   = "export.lock"  // held by the running exporter
)

// DefaultInterval is how often at most a hook starts the exporter.
const DefaultInterval = 10 * time.Second

// stateFile names a file beside the log.
func stateFile(logPath, name string) string { return filepath.Join(filepath.Dir(logPath), name) }
