package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/statefile"
)

// Telemetry is agentShim.telemetry: where the decision records go, for
// agent-shim-export (package telemetry resolves it with the standard
// OTEL_* variables over it).
//
//	"telemetry": {
//	  "enabled": true,
//	  "endpoint": "https://otel.example.com:4318",
//	  "protocol": "http/protobuf",
//	  "headers": {"authorization": "Bearer …"},
//	  "interval": "10s"
//	}
//
// The section is read by itself (ReadTelemetry), not by Load: the hook
// never decodes it on its way to a verdict.
type Telemetry struct {
	// Enabled turns export on or off; unset, export is on when an
	// endpoint is configured.
	Enabled *bool `json:"enabled,omitempty"`
	// Endpoint is the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
	// is (http/protobuf sends to <endpoint>/v1/logs).
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is "http/protobuf" (the default) or "grpc".
	Protocol string `json:"protocol,omitempty"`
	// Headers are sent with every request (OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string `json:"headers,omitempty"`
	// Interval is how often at most the exporter starts, a Go duration
	// between 1s and 1h ("10s" when unset).
	Interval string `json:"interval,omitempty"`
}

// Telemetry's interval bounds: a process per hook call is what the
// interval prevents; past an hour records wait too long.
const (
	MinTelemetryInterval = time.Second
	MaxTelemetryInterval = time.Hour
)

// ReadTelemetry reads agentShim.telemetry of the config file at path: nil
// when the file or the section is missing. Unknown keys and bad values are
// errors that name the file and the key.
func ReadTelemetry(path string) (*Telemetry, error) {
	data, err := statefile.ReadRegular(path, statefile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return ParseTelemetry(path, data)
}

// ParseTelemetry is ReadTelemetry of data; path names it in errors.
func ParseTelemetry(path string, data []byte) (*Telemetry, error) {
	var doc struct {
		AgentShim struct {
			Telemetry json.RawMessage `json:"telemetry"`
		} `json:"agentShim"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw := doc.AgentShim.Telemetry
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const key = "agentShim.telemetry"
	if raw[0] != '{' {
		return nil, fmt.Errorf("%s: %s: expected an object", path, key)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var t Telemetry
	if err := dec.Decode(&t); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: %s.%s: expected %s, found %s", path, key, te.Field, kindName(te.Type.Kind().String()), te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return nil, fmt.Errorf("%s: %s: unknown key %s (enabled, endpoint, protocol, headers, interval)", path, key, strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return nil, fmt.Errorf("%s: %s: %w", path, key, err)
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("%s: %s.%w", path, key, err)
	}
	return &t, nil
}

func kindName(k string) string {
	switch k {
	case "ptr", "bool":
		return "a boolean"
	case "map":
		return "an object"
	}
	return "a " + k
}

// validate checks the values; its errors start with the key.
func (t *Telemetry) validate() error {
	if t.Endpoint != "" {
		if !HTTPURL(t.Endpoint) {
			return fmt.Errorf("endpoint: %q is not an http:// or https:// URL", t.Endpoint)
		}
	}
	switch t.Protocol {
	case "", "http/protobuf", "grpc":
	default:
		return fmt.Errorf("protocol: %q is not supported (http/protobuf or grpc)", t.Protocol)
	}
	for k, v := range t.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("headers: %q: not a header name and value", k)
		}
	}
	if t.Interval != "" {
		d, err := time.ParseDuration(t.Interval)
		if err != nil || d < MinTelemetryInterval || d > MaxTelemetryInterval {
			return fmt.Errorf("interval: %q is not a duration from %v to %v (such as \"10s\")", t.Interval, MinTelemetryInterval, MaxTelemetryInterval)
		}
	}
	return nil
}

// HTTPURL reports whether s is an http:// or https:// URL with a host:
// checked by hand, as net/url would bring the network packages into the
// shim (agent-shim links none; the exporter parses the URL fully).
func HTTPURL(s string) bool {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "https://")
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if !ok || host == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// IntervalOf is t's interval, 0 when unset (t may be nil).
func (t *Telemetry) IntervalOf() time.Duration {
	if t == nil || t.Interval == "" {
		return 0
	}
	d, _ := time.ParseDuration(t.Interval)
	return d
}
