package gate

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/agent-shim/agent-shim/internal/config"
	"github.com/agent-shim/agent-shim/internal/manifest"
)

// scaledConfig writes a config.json as agents-setup makes it from the
// built-in defaults plus Fuchsia-like read-only rules, 385 rules in all
// times scale (cmd/agent-shim's fuchsiaConfig at scale 1).
func scaledConfig(tb testing.TB, path string, scale int) {
	tree, err := manifest.Load("")
	if err != nil {
		tb.Fatal(err)
	}
	lines := tree.Lines
	rnd := rand.New(rand.NewSource(1))
	progs := []string{"fx", "ffx", "jiri", "cipd", "gn", "ninja", "bazel", "cargo", "go", "npm", "make", "cmake"}
	subs := []string{"build", "test", "status", "list", "show", "info", "log", "check", "fmt", "lint", "query", "describe", "inspect", "doctor", "target", "component", "package", "repo", "update"}
	seen := map[string]bool{}
	for len(lines) < 385*scale {
		l := fmt.Sprintf("%s %s %s%d", progs[rnd.Intn(len(progs))], subs[rnd.Intn(len(subs))], subs[rnd.Intn(len(subs))], rnd.Intn(100000))
		if !seen[l] {
			seen[l] = true
			lines = append(lines, manifest.Line{Text: l, Category: "read_only", Overlay: ".", File: ".agents/config/permissions/read_only.txt", Num: len(lines)})
		}
	}
	f, err := config.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	f.Shim.Profile = "local-changes"
	for _, l := range lines {
		grants, err := manifest.Grants(l.Text)
		if err != nil {
			tb.Fatal(err)
		}
		switch l.Category {
		case "never_allow":
			f.Grants.Deny = append(f.Grants.Deny, grants...)
		case "external_changes", "cache_destruction", "batch_execution":
			f.Grants.Ask = append(f.Grants.Ask, grants...)
		default:
			f.Grants.Allow = append(f.Grants.Allow, grants...)
		}
		f.Shim.Rules = append(f.Shim.Rules, config.Rule{Line: l.Text, Category: l.Category,
			Source: config.Source{Overlay: l.Overlay, File: l.File, Line: l.Num}, Grants: grants})
	}
	data, err := f.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkScale is what a hook call spends in this package (load with the
// compact copy warm, then decide) with 1, 10 and 50 times Fuchsia's rules.
func BenchmarkScale(b *testing.B) {
	for _, scale := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("x%d", scale), func(b *testing.B) {
			dir := b.TempDir()
			cfg := filepath.Join(dir, "config.json")
			scaledConfig(b, cfg, scale)
			opts := cachedOptions(dir, filepath.Join(dir, "cache"))
			load := func() *Gate {
				g, err := Load(cfg, opts)
				if err != nil {
					b.Fatal(err)
				}
				return g
			}
			load()
			b.Run("load", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					load()
				}
			})
			b.Run("decide", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					g := load()
					b.StartTimer()
					g.DecideBash("git status && fx build")
				}
			})
		})
	}
}
