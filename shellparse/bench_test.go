package shellparse

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// agentScript returns about size bytes of what agents send: chains,
// pipelines, substitutions, here-documents, loops and nested shells,
// repeated from testdata/agent-script.sh.
func agentScript(tb testing.TB, size int) string {
	block, err := os.ReadFile("testdata/agent-script.sh")
	if err != nil {
		tb.Fatal(err)
	}
	n := size / len(block)
	if n < 1 {
		n = 1
	}
	return strings.Repeat(string(block), n)
}

// BenchmarkParse measures cost per byte across sizes: it must stay about
// the same from 20 KB to the size limit (linear cost). Pathological inputs
// are refused by the bounds check; their cost is that of the refusal.
func BenchmarkParse(b *testing.B) {
	cases := []struct{ name, src string }{
		{"GitStatus", "git status"},
	}
	for _, kb := range []int{20, 200, 1000} {
		cases = append(cases, struct{ name, src string }{fmt.Sprintf("Script%dKB", kb), agentScript(b, kb<<10)})
	}
	cases = append(cases,
		struct{ name, src string }{"Pathological600KBParens", strings.Repeat("(", 600<<10)},
		struct{ name, src string }{"Pathological1MBAndChain", strings.Repeat("a && ", (1<<20)/5-1) + "a"},
		struct{ name, src string }{"PathologicalNestedDollar", strings.Repeat("$(", 12<<10) + strings.Repeat(")", 12<<10)},
		struct{ name, src string }{"DeepButAllowed", strings.Repeat("$(", maxNesting/2) + "a" + strings.Repeat(")", maxNesting/2)},
	)
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.src)))
			b.ReportAllocs()
			wantErr := strings.HasPrefix(bc.name, "Pathological")
			for b.Loop() {
				_, err := Parse(bc.src)
				if (err != nil) != wantErr {
					b.Fatal(err)
				}
			}
		})
	}
}
