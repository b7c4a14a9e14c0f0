package shellparse

import (
	"os"
	"strings"
	"testing"
)

// agentScript returns about 20 KB of what agents send: chains, pipelines,
// substitutions, here-documents, loops and nested shells, repeated from
// testdata/agent-script.sh.
func agentScript(tb testing.TB) string {
	block, err := os.ReadFile("testdata/agent-script.sh")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Repeat(string(block), (20<<10)/len(block)+1)
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"GitStatus", "git status"},
		{"Script20KB", agentScript(b)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(bc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
