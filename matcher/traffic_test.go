package matcher_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/setup"
	"github.com/agent-shim/agent-shim/matcher"
)

// newcomerGate is the gate a newcomer gets from the README's set-up:
// agents-setup writes config.json from the built-in manifests (a
// checkout with none of its own) at its default profile, local-changes;
// the hook loads it, working inside the checkout. HOME and the XDG
// directories are the test's own.
// With layer set it decides its lines as they run under the run-time
// layer (explain --runtime).
func newcomerGate(t testing.TB, layer bool) *gate.Gate {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(dir, "xdg/config"),
		"XDG_STATE_HOME": filepath.Join(dir, "xdg/state"), "XDG_CACHE_HOME": filepath.Join(dir, "xdg/cache"),
		"XDG_DATA_HOME": filepath.Join(dir, "xdg/data")}
	for k, v := range env {
		t.Setenv(k, v)
	}
	for _, k := range []string{"GEMINI_CONFIG_DIR", "GEMINI_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		t.Setenv(k, "")
	}
	ck := filepath.Join(dir, "ck")
	for _, d := range []string{filepath.Join(ck, ".git", "hooks"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(home, ".gemini", "config", "config.json")
	o := &setup.Options{Config: cfg, StateDir: filepath.Join(dir, "state"), Root: ck, RootSet: true,
		Stdout: io.Discard, Stderr: io.Discard,
		Getenv:  func(k string) string { return env[k] },
		Getwd:   func() (string, error) { return ck, nil },
		Now:     func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Restart: func(context.Context, []string, io.Writer) error { return nil },
	}
	if err := setup.Run(context.Background(), o); err != nil {
		t.Fatalf("agents-setup: %v", err)
	}
	g, err := gate.Load(cfg, gate.Options{Scope: gate.NewScope(ck), Dir: ck, Layer: layer})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The measures issue 33 asks of the newcomer's policy on real agent
// traffic, in percent: harmless lines asked about or refused (friction),
// and risky lines left to the agent (undecided). No risky line may be
// allowed.
const (
	maxNewcomerFriction  = 2
	maxNewcomerUndecided = 5
)

// TestTrafficNewcomer decides the real agent lines of testdata/traffic.tsv
// with the newcomer's policy (newcomerGate), as the hook reads them, and
// holds issue 33's figures. Rows marked (policy are local changes only the
// corpus's reference policy asks about: harmless here. A (tmp: …) row may
// also ask (../shared/corpus/README.md).
func TestTrafficNewcomer(t *testing.T) {
	trafficNewcomer(t, false)
}

// TestTrafficNewcomerRuntime is TestTrafficNewcomer in the run-time
// reading (explain --runtime, shell mode with the layer on): besides the
// same friction and undecided bounds, at least 95% of the harmless lines
// run with no prompt, and still no risky line is allowed.
func TestTrafficNewcomerRuntime(t *testing.T) {
	trafficNewcomer(t, true)
}

const minRuntimeUnattended = 95

func trafficNewcomer(t *testing.T, layer bool) {
	g := newcomerGate(t, layer)
	rows := readGateCorpus(t, "traffic.tsv")
	if len(rows) < 190 {
		t.Fatalf("traffic has only %d rows", len(rows))
	}
	harmless, friction, unattended, risky, undecided := 0, 0, 0, 0, 0
	for _, r := range rows {
		x := g.Explain(r.command)
		got := x.Decision.Verdict
		switch {
		case r.harmless || strings.Contains(r.why, "(policy"):
			harmless++
			switch got {
			case matcher.Ask, matcher.Deny:
				friction++
				t.Logf("friction: line %d: %q: %v (%s)", r.line, r.command, got, x.Decision.Reason)
			case matcher.Allow:
				unattended++
			}
		case r.tmp && (got == r.tmpWithout || got == matcher.Ask):
			// The temp directory's writes are the product's call.
		case r.tmp && layer && got == matcher.Allow && (r.tmpWithout == matcher.Default || r.tmpWithout == matcher.Allow):
			// Under the layer the temporary directory's writes are
			// confined, and a line harmless without them runs.
		default:
			risky++
			switch got {
			case matcher.Allow:
				t.Errorf("line %d: %q: a risky line is allowed (want %v: %s)\n%s", r.line, r.command, r.want, r.why, explainGate(x))
			case matcher.Default:
				undecided++
				t.Logf("undecided: line %d: %q (want %v: %s): %s", r.line, r.command, r.want, r.why, x.Decision.Reason)
			}
		}
	}
	t.Logf("friction %d of %d harmless lines (%.1f%%), %d run unattended (%.1f%%); %d of %d risky lines left to the agent (%.1f%%)",
		friction, harmless, 100*float64(friction)/float64(harmless), unattended, 100*float64(unattended)/float64(harmless),
		undecided, risky, 100*float64(undecided)/float64(risky))
	if friction*100 > maxNewcomerFriction*harmless {
		t.Errorf("friction: %d of %d harmless lines asked about or refused, more than %d%%", friction, harmless, maxNewcomerFriction)
	}
	if layer && unattended*100 < minRuntimeUnattended*harmless {
		t.Errorf("unattended: %d of %d harmless lines run with no prompt under the layer, fewer than %d%%", unattended, harmless, minRuntimeUnattended)
	}
	if undecided*100 > maxNewcomerUndecided*risky {
		t.Errorf("undecided: %d of %d risky lines left to the agent, more than %d%%", undecided, risky, maxNewcomerUndecided)
	}
}
