package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTelemetry(t *testing.T) {
	yes := true
	tests := []struct {
		in   string
		want *Telemetry
		err  string
	}{
		{in: `{}`},
		{in: `{"agentShim": {"version": 2}}`},
		{in: `{"agentShim": {"telemetry": null}}`},
		{in: `{"agentShim": {"telemetry": {}}}`, want: &Telemetry{}},
		{in: `{"agentShim": {"telemetry": {"enabled": true, "endpoint": "https://otel.example.com:4318", "protocol": "grpc", "headers": {"authorization": "Bearer x"}, "interval": "30s"}}}`,
			want: &Telemetry{Enabled: &yes, Endpoint: "https://otel.example.com:4318", Protocol: "grpc", Headers: map[string]string{"authorization": "Bearer x"}, Interval: "30s"}},
		{in: `{"agentShim": {"telemetry": {"protocol": "http/protobuf"}}}`, want: &Telemetry{Protocol: "http/protobuf"}},

		{in: `{"agentShim": {"telemetry": []}}`, err: "config.json: agentShim.telemetry: expected an object"},
		{in: `{"agentShim": {"telemetry": {"enabled": "yes"}}}`, err: "config.json: agentShim.telemetry.enabled: expected a boolean, found string"},
		{in: `{"agentShim": {"telemetry": {"endpoint": 4318}}}`, err: "config.json: agentShim.telemetry.endpoint: expected a string, found number"},
		{in: `{"agentShim": {"telemetry": {"headers": ["a"]}}}`, err: "config.json: agentShim.telemetry.headers: expected an object, found array"},
		{in: `{"agentShim": {"telemetry": {"endpoint": "127.0.0.1:4318"}}}`, err: `config.json: agentShim.telemetry.endpoint: "127.0.0.1:4318" is not an http:// or https:// URL`},
		{in: `{"agentShim": {"telemetry": {"endpoint": "ftp://c"}}}`, err: "agentShim.telemetry.endpoint"},
		{in: `{"agentShim": {"telemetry": {"endpoint": "http://"}}}`, err: "agentShim.telemetry.endpoint"},
		{in: `{"agentShim": {"telemetry": {"endpoint": "http:///v1/logs"}}}`, err: "agentShim.telemetry.endpoint"},
		{in: `{"agentShim": {"telemetry": {"endpoint": "https://collector .corp:4318"}}}`, err: "agentShim.telemetry.endpoint"},
		{in: `{"agentShim": {"telemetry": {"endpoint": "http://?x"}}}`, err: "agentShim.telemetry.endpoint"},
		{in: `{"agentShim": {"telemetry": {"protocol": "http/json"}}}`, err: `config.json: agentShim.telemetry.protocol: "http/json" is not supported (http/protobuf or grpc)`},
		{in: `{"agentShim": {"telemetry": {"headers": {"a b": "x"}}}}`, err: "config.json: agentShim.telemetry.headers"},
		{in: `{"agentShim": {"telemetry": {"headers": {"a": "x\r\nInjected: y"}}}}`, err: "config.json: agentShim.telemetry.headers"},
		{in: `{"agentShim": {"telemetry": {"interval": "10"}}}`, err: `config.json: agentShim.telemetry.interval: "10" is not a duration from 1s to 1h0m0s`},
		{in: `{"agentShim": {"telemetry": {"interval": "10ms"}}}`, err: "agentShim.telemetry.interval"},
		{in: `{"agentShim": {"telemetry": {"interval": "2h"}}}`, err: "agentShim.telemetry.interval"},
		{in: `{"agentShim": {"telemetry": {"interval": 10}}}`, err: "config.json: agentShim.telemetry.interval: expected a string, found number"},
		{in: `{"agentShim": {"telemetry": {"endpiont": "http://c"}}}`, err: `config.json: agentShim.telemetry: unknown key "endpiont"`},
		{in: `{"agentShim": {"telemetry": {}`, err: "config.json: "},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		got, err := ParseTelemetry("config.json", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %+v, %v; want an error with %q", got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("error: %v", err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestTelemetryBesideLoad: the section is read by itself; Load and
// Marshal pass it through untouched, and a missing file has none.
func TestTelemetryBesideLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if tel, err := ReadTelemetry(path); tel != nil || err != nil {
		t.Fatalf("missing file: %+v, %v", tel, err)
	}
	const in = "{\n  \"agentShim\": {\n    \"mode\": \"ask\",\n    \"telemetry\": {\"endpoint\": \"http://127.0.0.1:4318\"}\n  }\n}\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Shim.Mode = "default"
	out, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if tel, err := ParseTelemetry(path, out); err != nil || tel == nil || tel.Endpoint != "http://127.0.0.1:4318" {
		t.Errorf("Marshal did not keep the section (%+v, %v):\n%s", tel, err, out)
	}
	tel, err := ReadTelemetry(path)
	if err != nil || tel == nil || tel.Endpoint != "http://127.0.0.1:4318" {
		t.Errorf("ReadTelemetry: %+v, %v", tel, err)
	}
}
