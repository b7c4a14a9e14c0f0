package shellparse

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// treeDepth is the deepest chain of nested constructs in a parsed file,
// counting the nodes whose parsing or walking recurses.
func treeDepth(f *syntax.File) int {
	depth, deepest := 0, 0
	var stack []bool
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			if stack[len(stack)-1] {
				depth--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		counts := false
		switch n.(type) {
		case *syntax.Subshell, *syntax.Block, *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp,
			*syntax.ArithmCmd, *syntax.ParamExp, *syntax.DblQuoted, *syntax.IfClause, *syntax.WhileClause,
			*syntax.ForClause, *syntax.CaseClause, *syntax.BinaryCmd, *syntax.BinaryArithm,
			*syntax.UnaryArithm, *syntax.ParenArithm, *syntax.BinaryTest, *syntax.UnaryTest,
			*syntax.ParenTest, *syntax.FuncDecl, *syntax.TestClause, *syntax.LetClause:
			counts = true
			depth++
			deepest = max(deepest, depth)
		}
		stack = append(stack, counts)
		return true
	})
	return deepest
}

// FuzzParse: parsing never panics; a line the bounds check accepts is no
// deeper than the check measured (so maxNesting bounds the recursion of
// the parser and of every walk over its tree); the zsh reading never
// panics either.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add(tc.in)
	}
	for _, tc := range classTests {
		f.Add(tc.in)
	}
	for _, tc := range interpTests {
		f.Add(tc.in)
	}
	for _, tc := range zshTests {
		f.Add(tc.in)
	}
	for _, tc := range pathological {
		if len(tc.in) < 4096 {
			f.Add(tc.in)
		} else {
			f.Add(tc.in[:4096])
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		if _, err := Parse(in); err != nil && strings.Contains(err.Error(), "nesting deeper") {
			return
		}
		ParseShell(in, "zsh")
		b := &bounds{src: in, line: 1}
		if b.scan() != nil {
			return
		}
		file, err := parse(in)
		if err != nil {
			return
		}
		if d := treeDepth(file); d > 2*b.max+2 {
			t.Errorf("tree depth %d but the bounds check measured %d", d, b.max)
		}
	})
}
