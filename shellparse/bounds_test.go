package shellparse

import (
	"strings"
	"testing"
	"time"
)

// pathological are inputs that once exhausted the Go stack or took seconds:
// each must be refused, quickly, with a clear reason.
var pathological = []struct {
	name, in, want string
}{
	{"parens", strings.Repeat("(", 600<<10), "nesting deeper than"},
	{"parensSpaced", strings.Repeat("( ", 300<<10), "nesting deeper than"},
	{"andChain", strings.Repeat("a && ", 200<<10) + "a", "nesting deeper than"},
	{"orChain", strings.Repeat("a||", 300<<10) + "a", "nesting deeper than"},
	{"pipes", strings.Repeat("a | ", 250<<10) + "a", "nesting deeper than"},
	{"dollarParens", strings.Repeat("$(", 12<<10) + strings.Repeat(")", 12<<10), "nesting deeper than"},
	{"quotedDollar", strings.Repeat(`"$(`, 8<<10), "nesting deeper than"},
	{"backticks", "echo " + strings.Repeat("$(`", 2000), "nesting deeper than"},
	{"braces", strings.Repeat("{ ", 300<<10) + "a", "nesting deeper than"},
	{"params", strings.Repeat("${x:-", 100<<10), "nesting deeper than"},
	{"ifs", strings.Repeat("if a; then ", 50<<10) + "a" + strings.Repeat("; fi", 50<<10), "nesting deeper than"},
	{"whiles", strings.Repeat("while a; do ", 50<<10), "nesting deeper than"},
	{"cases", strings.Repeat("case x in a) ", 50<<10), "nesting deeper than"},
	{"arith", "echo $((" + strings.Repeat("1+", 200<<10) + "1))", "nesting deeper than"},
	{"arithCmd", "((" + strings.Repeat("1?1:", 100<<10) + "1))", "nesting deeper than"},
	{"arithPow", "let x=" + strings.Repeat("1**", 100<<10) + "1", "nesting deeper than"},
	{"arithParens", "echo $[" + strings.Repeat("(", 200<<10), "nesting deeper than"},
	{"testChain", "[[ " + strings.Repeat("a && ", 100<<10) + "a ]]", "nesting deeper than"},
	{"testNot", "[[ " + strings.Repeat("! ", 200<<10) + "a ]]", "nesting deeper than"},
	{"braceExpansion", "echo " + strings.Repeat("{a,", 200<<10), "nesting deeper than"},
	{"subscripts", "echo ${a[" + strings.Repeat("a[", 200<<10), "nesting deeper than"},
	{"caseHidesParens", "case x in " + strings.Repeat("a) ", 1000) + strings.Repeat("(", 200<<10), "nesting deeper than"},
	{"heredocDollars", "cat <<E\n" + strings.Repeat("$(", 50<<10) + "\nE", "nesting deeper than"},
	{"procSubst", strings.Repeat("<(", 100<<10), "nesting deeper than"},
	{"huge", strings.Repeat("a\n", maxSize), "longer than 1048576 bytes"},
}

func TestPathological(t *testing.T) {
	for _, tc := range pathological {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse(tc.in)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want error containing %q, got %v", tc.want, err)
			}
			if took > time.Second {
				t.Errorf("took %v to refuse", took)
			}
		})
	}
}

// TestWithinBounds checks that what real scripts hold is not refused.
func TestWithinBounds(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("a && ", maxNesting/2) + "a",
		strings.Repeat("(", maxNesting/2) + "a" + strings.Repeat(")", maxNesting/2),
		strings.Repeat("echo $(date) | grep x && ls\n", 20000),
		strings.Repeat("cat <<'EOF'\n((((((((((( if for while\nEOF\n", 2000),
		strings.Repeat("cat <<EOF\n:-( if for while ${x} $(date)\nEOF\n", 2000),
		strings.Repeat("case $x in a) b;; (c) d;; esac\n", 3000),
		strings.Repeat("if a; then b; fi; for x in y; do z; done\n", 3000),
		strings.Repeat("echo '((((((((((' \"(((((((\" \\( # ((((((\n", 2000),
		strings.Repeat("echo $((1+2*3)) ${x:-y} ${#a[@]}\n", 3000),
		"cat <<'E'\n\nx\n\nE\n", // empty lines in a quoted here-document
		"cat <<E\n\n\nE",
	} {
		if _, err := Parse(in); err != nil {
			t.Errorf("input %.60q…: %v", in, err)
		}
	}
}

// TestNestedBudget: eval eval … re-reads the rest of the line at every
// level; the total read stays a small multiple of the line.
func TestNestedBudget(t *testing.T) {
	in := strings.Repeat("eval ", 40000) + "rm -rf /"
	start := time.Now()
	s, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if len(s.Commands) != 1 || !strings.Contains(s.Commands[0].Unknown, "nested scripts longer than") {
		t.Errorf("want one command stopped by the budget, got %q", summary(s.Commands))
	}
}
