package telemetry

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/statefile"
)

// Settings is what the export does: config.json's agentShim.telemetry
// with the standard OpenTelemetry variables over it.
type Settings struct {
	Enabled bool
	// Endpoint is the section's endpoint, "" when the variables name one
	// (the SDK reads them) or nobody does (the SDK's default).
	Endpoint string
	// Protocol is http/protobuf or grpc (or what a variable says, which
	// the exporter then refuses when it is neither).
	Protocol string
	// Headers are the section's headers, nil when a variable sets them.
	Headers  map[string]string
	Interval time.Duration
}

// Resolve applies the standard variables over the section t (nil: none).
// The variables win, key by key, as the OpenTelemetry specification has
// environment configuration do for an SDK: config.json is the machine's
// default, written by agents-setup or configuration management, and a
// variable is the narrower setting of one session or deployment (and how
// the agents' own telemetry, beside which these records are read, is
// usually configured).
//
//   - on/off: OTEL_SDK_DISABLED=true turns it off; else OTEL_LOGS_EXPORTER,
//     when set, decides (on when it names otlp); else the section's
//     "enabled"; else it is on when an endpoint is configured
//     (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT or
//     the section's);
//   - endpoint and headers: the variables (the signal's first), else the
//     section's;
//   - protocol: OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL,
//     the section's, http/protobuf;
//   - interval: OTEL_BLRP_SCHEDULE_DELAY (milliseconds, 1s to 1h), the
//     section's, DefaultInterval.
func Resolve(getenv func(string) string, t *config.Telemetry) Settings {
	if t == nil {
		t = &config.Telemetry{}
	}
	envEndpoint := getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	s := Settings{Protocol: "http/protobuf", Interval: DefaultInterval}
	switch on, set := envSwitch(getenv); {
	case set:
		s.Enabled = on
	case t.Enabled != nil:
		s.Enabled = *t.Enabled
	default:
		s.Enabled = envEndpoint || t.Endpoint != ""
	}
	if !envEndpoint {
		s.Endpoint = t.Endpoint
	}
	if getenv("OTEL_EXPORTER_OTLP_LOGS_HEADERS") == "" && getenv("OTEL_EXPORTER_OTLP_HEADERS") == "" {
		s.Headers = t.Headers
	}
	switch {
	case getenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL") != "":
		s.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"))
	case getenv("OTEL_EXPORTER_OTLP_PROTOCOL") != "":
		s.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	case t.Protocol != "":
		s.Protocol = t.Protocol
	}
	if d, ok := envInterval(getenv); ok {
		s.Interval = d
	} else if d := t.IntervalOf(); d > 0 {
		s.Interval = d
	}
	return s
}

// envSwitch is what the variables say about export: set is false when
// they leave it to the section.
func envSwitch(getenv func(string) string) (on, set bool) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, true
	}
	exp := strings.ToLower(getenv("OTEL_LOGS_EXPORTER"))
	if strings.TrimSpace(exp) == "" {
		return false, false
	}
	for _, x := range strings.Split(exp, ",") {
		if strings.TrimSpace(x) == "otlp" {
			return true, true
		}
	}
	return false, true
}

// envInterval is OTEL_BLRP_SCHEDULE_DELAY when it is a whole number of
// milliseconds from 1s to 1h.
func envInterval(getenv func(string) string) (time.Duration, bool) {
	ms, err := strconv.Atoi(strings.TrimSpace(getenv("OTEL_BLRP_SCHEDULE_DELAY")))
	d := time.Duration(ms) * time.Millisecond
	return d, err == nil && d >= config.MinTelemetryInterval && d <= config.MaxTelemetryInterval
}

// SettingsName is the copy of config.json's telemetry section kept beside
// the log, so that a hook reads config.json only after it changed.
const SettingsName = "telemetry.json"

// sectionCopy is SettingsName's content: the section and the config file
// it was read from, as it was then.
type sectionCopy struct {
	Config  string            `json:"config"`
	Size    int64             `json:"size"`
	ModTime int64             `json:"mtime_ns"`
	Section *config.Telemetry `json:"section"`
}

// section returns config.json's telemetry section, from the copy beside
// the log while config.json's size and time are those the copy was made
// from, else from config.json (and the copy made again). A config.json
// that is not there has none.
func section(logPath, configPath string) (*config.Telemetry, error) {
	if configPath == "" {
		return nil, nil
	}
	fi, err := os.Stat(configPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	copyPath := stateFile(logPath, SettingsName)
	if data, err := statefile.ReadRegular(copyPath, 1<<20); err == nil {
		var c sectionCopy
		if json.Unmarshal(data, &c) == nil && c.Config == configPath && c.Size == fi.Size() && c.ModTime == fi.ModTime().UnixNano() {
			return c.Section, nil
		}
	}
	t, err := config.ReadTelemetry(configPath)
	if err != nil {
		return nil, err
	}
	// A copy that cannot be written costs the next call a read of
	// config.json, nothing else.
	statefile.WriteJSON(copyPath, sectionCopy{Config: configPath, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Section: t}, 0o600)
	return t, nil
}

// Load resolves the settings for a hook: the section through the copy
// beside the log (see section), the variables over it.
func Load(getenv func(string) string, logPath, configPath string) (Settings, error) {
	t, err := section(logPath, configPath)
	if err != nil {
		return Settings{}, err
	}
	return Resolve(getenv, t), nil
}
