package jsonv2bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/gate"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// document is what a jsontext-based config.Load would decode: the two
// sections it owns into structs, every other member kept as raw values
// (for Marshal to keep them and their order).
type document struct {
	UserSettings struct {
		Grants  config.Grants  `json:"globalPermissionGrants"`
		Unknown jsontext.Value `json:",unknown"`
	} `json:"userSettings"`
	AgentShim config.Shim    `json:"agentShim"`
	Unknown   jsontext.Value `json:",unknown"`
}

// bigConfig writes a config.json of Fuchsia's size (385 long regex grants
// with their rules, as gate's cache tests build it) and returns its path
// and content.
func bigConfig(b *testing.B) (string, []byte) {
	long := strings.Repeat(`(?:[^\x00-\x20\x7f;&|<>()$\x60\\"']|\\[^\x00-\x1f\x7f])*`, 28)
	f := &config.File{Path: "config.json"}
	cats := []string{"read_only", "local_changes", "external_changes", "never_allow"}
	for i := range 385 {
		g := fmt.Sprintf("command(regex:^tool%d %s$)", i, long)
		switch cats[i%4] {
		case "never_allow":
			f.Grants.Deny = append(f.Grants.Deny, g)
		case "external_changes":
			f.Grants.Ask = append(f.Grants.Ask, g)
		default:
			f.Grants.Allow = append(f.Grants.Allow, g)
		}
		f.Shim.Rules = append(f.Shim.Rules, config.Rule{Line: fmt.Sprintf("tool%d", i), Category: cats[i%4],
			Source: config.Source{Overlay: ".", File: ".agents/config/permissions/" + cats[i%4] + ".txt", Line: i + 1}, Grants: []string{g}})
	}
	f.Shim.Profile = "local-changes"
	data, err := f.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path, data
}

func BenchmarkParseHandWritten(b *testing.B) {
	_, data := bigConfig(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := config.Parse("config.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJSONv2(b *testing.B) {
	_, data := bigConfig(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var d document
		if err := jsonv2.Unmarshal(data, &d); err != nil {
			b.Fatal(err)
		}
		if len(d.AgentShim.Rules) < 300 {
			b.Fatal("few rules")
		}
	}
}

// BenchmarkHookPathLoad is what the hook pays for the policy: gate.Load
// with the compact copy warm (no config.Load at all) and cold (one
// config.Load: the first call after each change of config.json).
func BenchmarkHookPathLoad(b *testing.B) {
	cfg, _ := bigConfig(b)
	dir := b.TempDir()
	for _, bc := range []struct{ name, cache string }{{"Warm", filepath.Join(dir, "cache")}, {"Cold", ""}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g, err := gate.Load(cfg, dir, "", gate.Options{CacheDir: bc.cache})
				if err != nil {
					b.Fatal(err)
				}
				g.DecideBash("git status")
			}
		})
	}
}
