package programs

import "testing"

// BenchmarkParseBuiltin is what the first decision of a process pays for
// the table (it is parsed on first use, never at start-up).
func BenchmarkParseBuiltin(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(builtinText)))
	for b.Loop() {
		if _, err := parse("programs.txt", []byte(builtinText), true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstDecision is what a hook process pays: finding git's
// blocks in the embedded text and parsing them alone.
func BenchmarkFirstLookup(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		t := &Table{lz: newLazy("programs.txt", builtinText)}
		if t.Program("git") == nil {
			b.Fatal("no git")
		}
	}
}

func BenchmarkWriteTargets(b *testing.B) {
	Builtin()
	argv := []string{"cp", "-r", "--", "a", "b", "dst"}
	b.ReportAllocs()
	for b.Loop() {
		WriteTargets(argv)
	}
}
