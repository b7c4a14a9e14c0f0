package programs

import (
	"strings"
	"testing"
)

// FuzzParse reads arbitrary table text: it never panics; a table that
// parses formats to text that parses to the same table; merging it into
// the built-in table either works or names a line; and reading commands
// with it never panics.
func FuzzParse(f *testing.F) {
	f.Add(builtinText)
	for _, tc := range parseErrorTests {
		f.Add(tc.in)
	}
	f.Add("[mytool]\nexec --hook -x@run=\nwrites operands -i\ntargets last\n")
	f.Add("[less]\nexec +! +|\nenv-exec LESSOPEN\n[dd]\nwrite of=\n")
	f.Fuzz(func(t *testing.T, text string) {
		tb, err := Parse("fuzz.txt", []byte(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		out := tb.Format()
		again, err := Parse("formatted", out)
		if err != nil {
			t.Fatalf("formatted table does not parse: %v\n%s", err, out)
		}
		if string(again.Format()) != string(out) {
			t.Fatalf("format does not round-trip:\n%s\n---\n%s", out, again.Format())
		}
		if _, err := Builtin().Merge(tb); err != nil && !strings.Contains(err.Error(), "fuzz.txt:") {
			t.Fatalf("merge error does not name the line: %v", err)
		}
		for _, k := range tb.order {
			argv := append(strings.Fields(k), "-x", "--y=z", "a", "-", "--", "-b", "+!c", "of=d", "e=f")
			tb.WriteTargets(argv)
			tb.WriteTargets(strings.Fields(k))
		}
	})
}
