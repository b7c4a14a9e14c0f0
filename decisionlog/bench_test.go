package decisionlog

import (
	"path/filepath"
	"testing"
)

// BenchmarkLog is one Log call as hook mode makes it: a fresh writer, a
// realistic entry, one line appended to a real file.
func BenchmarkLog(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state", "agent-shim", FileName)
	e := Entry{
		Agent: "claude-code", Session: "0f7c1d9e-5a7b-4c1e-9a55-2b1f0e8f4d3a", Layer: LayerHook,
		Cwd: "/home/dev/fuchsia", Tool: "Bash", Command: "git status && fx build", Verdict: "allow",
		Reason: "fx build: matches an allow rule: `fx build` (.agents/config/permissions/local_changes.txt:12)",
		Rule:   &Rule{Text: "fx build", List: "allow", Category: "local_changes", Overlay: ".", File: ".agents/config/permissions/local_changes.txt", Line: 12},
	}
	b.ReportAllocs()
	for b.Loop() {
		NewWriter(path, Options{}).Log(e)
	}
}
