// Command agent-shim-export sends agent-shim's decision log to an
// OpenTelemetry collector as OTLP log records, one per decision.
//
// agent-shim's hook starts it, detached, at most once per interval
// (default 10s) when export is configured; a person or a timer may run it
// too. It reads decisions.jsonl from the
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
//	agent-shim-export [--log FILE] [--config FILE] [--once] [--idle D]
//
// --once sends what the log holds and leaves. The collector is configured
// by config.json's agentShim.telemetry (--config, default the agent's
// config.json):
//
//	"telemetry": {"enabled": true, "endpoint": "https://otel.example.com:4318",
//	  "protocol": "http/protobuf", "headers": {"authorization": "Bearer …"},
//	  "interval": "10s"}
//
// and by the standard variables, which win over it key by key (the
// section is the machine's default; a variable is one session's or
// deployment's setting, as the OpenTelemetry specification has
// environment configuration work): OTEL_SDK_DISABLED, OTEL_LOGS_EXPORTER,
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc; also
// OTEL_EXPORTER_OTLP_LOGS_PROTOCOL), OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS (and
// _LOGS_), OTEL_BLRP_SCHEDULE_DELAY (the interval, in milliseconds); and,
// with no counterpart in the section, OTEL_EXPORTER_OTLP_TIMEOUT,
// OTEL_EXPORTER_OTLP_INSECURE, the TLS variables, OTEL_RESOURCE_ATTRIBUTES
// and OTEL_SERVICE_NAME (default service.name is agent-shim). A section
// with a bad value is an error naming the file and the key (exit 1).
//
// Each record's event name is agent_shim.tool_decision; its attributes
// follow Claude Code's claude_code.tool_decision: event.name,
// event.timestamp, session.id, decision (allow, ask, deny, default),
// source (rule, floor, user_<answer>, or default), tool_name,
// tool_use_id; and agent, layer, cwd, command, argv, reason, answer,
// rule.text, rule.list, rule.category, rule.overlay, rule.file,
// rule.line, floor; and lost, when the log lost lines just before this
// one (a full disk, its rotation lock held). They hold what the log
// holds, already redacted.
//
// # Exit codes
//
//	0  everything read was sent (or another exporter is running)
//	1  the collector could not be reached or refused the records (the
//	   position is kept and the next run sends them), or the settings
//	   are bad
//	2  bad command line
//
// # Files
//
// In the decision log's directory ($XDG_STATE_HOME/agent-shim):
// export.json (the position per log file), export.lock (held by the
// running exporter, which renews its time: a holder that has not renewed
// it for 30 seconds is no exporter, and the export goes on without the
// lock), export.stamp (its time: when a hook is next due to start the
// exporter; one per combination of the OTEL_ variables that turn export
// on or off), telemetry.json (the hook's copy of config.json's telemetry
// section, read again when config.json changes).
package main
