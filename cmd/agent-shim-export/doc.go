// Command agent-shim-export sends agent-shim's decision log to an
// OpenTelemetry collector as OTLP log records, one per decision.
//
// agent-shim's hook starts it, detached, at most once per interval
// (OTEL_BLRP_SCHEDULE_DELAY, default 10s) when export is configured; a
// person or a timer may run it too. It reads decisions.jsonl from the
// position saved in the state directory, sends the records through the
// OpenTelemetry Go SDK's OTLP log exporter (HTTP or gRPC), and saves
// the new position only after the collector acknowledged them. It stays
// while records keep coming, tries a collector that is down again each
// interval (for up to five minutes, each time on a new connection), and
// leaves after --idle (three intervals, at most a minute) with none. One
// runs at a time (a lock in the state directory); another started
// meanwhile leaves at once.
//
// # Usage
//
//	agent-shim-export [--log FILE] [--once] [--idle D]
//
// --once sends what the log holds and leaves. The collector and the
// resource are configured by the standard variables:
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc; also
// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL), OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_INSECURE, the TLS
// variables, OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (default
// service.name is agent-shim).
//
// Each record's event name is agent_shim.tool_decision; its attributes
// follow Claude Code's claude_code.tool_decision: event.name,
// event.timestamp, session.id, decision (allow, ask, deny, default),
// source (rule, floor, user_<answer>, or default), tool_name,
// tool_use_id; and agent, layer, cwd, command, argv, reason, answer,
// rule.text, rule.list, rule.category, rule.overlay, rule.file,
// rule.line, floor. They hold what the log holds, already redacted.
//
// # Exit codes
//
//	0  everything read was sent (or another exporter is running)
//	1  the collector could not be reached or refused the records; the
//	   position is kept and the next run sends them
//	2  bad command line
//
// # Files
//
// In the decision log's directory ($XDG_STATE_HOME/agent-shim):
// export.json (the position per log file), export.lock, export.stamp
// (when a hook last started the exporter).
package main
