package otlp

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// EventName is the event every decision is exported as.
const EventName = "agent_shim.tool_decision"

// logRecord is one decision as an OTLP log record. Attribute names follow
// Claude Code's claude_code.tool_decision event (decision, source,
// tool_name, tool_use_id, session.id), so that a collector can put the
// agent's own decision and agent-shim's side by side by tool_use_id.
func logRecord(r telemetry.Record) log.Record {
	var rec log.Record
	rec.SetEventName(EventName)
	rec.SetTimestamp(r.Time)
	rec.SetObservedTimestamp(time.Now())
	rec.SetBody(attribute.StringValue(EventName))
	sev, text := log.SeverityInfo, "INFO"
	if r.Verdict == "deny" {
		sev, text = log.SeverityWarn, "WARN"
	}
	rec.SetSeverity(sev)
	rec.SetSeverityText(text)
	rec.AddAttributes(attributes(r)...)
	return rec
}

// attributes are a decision's attributes; empty fields are left out.
func attributes(r telemetry.Record) []attribute.KeyValue {
	kv := []attribute.KeyValue{
		attribute.String("event.name", EventName),
		attribute.String("event.timestamp", r.Time.UTC().Format(time.RFC3339Nano)),
		attribute.String("decision", r.Verdict),
		attribute.String("source", source(r)),
	}
	str := func(k, v string) {
		if v != "" {
			kv = append(kv, attribute.String(k, v))
		}
	}
	str("session.id", r.Session)
	str("tool_name", r.Tool)
	str("tool_use_id", r.ToolUseID)
	str("agent", r.Agent)
	str("layer", r.Layer)
	str("cwd", r.Cwd)
	str("command", r.Command)
	if len(r.Argv) > 0 {
		kv = append(kv, attribute.StringSlice("argv", r.Argv))
	}
	str("reason", r.Reason)
	str("answer", r.Answer)
	if r.Rule != nil {
		str("rule.text", r.Rule.Text)
		str("rule.list", r.Rule.List)
		str("rule.category", r.Rule.Category)
		str("rule.overlay", r.Rule.Overlay)
		str("rule.file", r.Rule.File)
		if r.Rule.Line > 0 {
			kv = append(kv, attribute.Int("rule.line", r.Rule.Line))
		}
	}
	str("floor", r.Floor)
	if r.Lost > 0 {
		kv = append(kv, attribute.Int("lost", r.Lost))
	}
	if r.Tree {
		kv = append(kv, attribute.Bool("tree", true))
	}
	return kv
}

// source says what decided, in the spirit of Claude Code's source
// (config, user_temporary, …): a person's answer, a rule, a floor or
// fact, or nothing (the default).
func source(r telemetry.Record) string {
	switch {
	case r.Answer != "":
		return "user_" + r.Answer
	case r.Rule != nil:
		return "rule"
	case r.Floor != "":
		return "floor"
	}
	return "default"
}
