package policycheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agent-shim/agent-shim/internal/manifest"
)

// ErrTestsFailed means a policy test got another verdict than it expects.
var ErrTestsFailed = errors.New("policy tests failed")

// Check runs the policy tests of tree (under the profiles in only, or
// those each test names) and writes one line per failure to w, then a
// summary. It returns an error wrapping ErrTestsFailed when any failed,
// and another error when the tests or the policy cannot be read.
func Check(w io.Writer, tree *manifest.Tree, only ...string) error {
	tests, err := LoadTests(tree)
	if err != nil {
		return err
	}
	failures, ran, err := Run(tree, tests, only...)
	if err != nil {
		return err
	}
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	switch {
	case len(failures) > 0:
		return fmt.Errorf("%w: %d of %d", ErrTestsFailed, len(failures), ran)
	case ran == 0:
		fmt.Fprintln(w, "no policy tests (add .agents/config/tests.txt)")
	default:
		fmt.Fprintf(w, "%d policy tests passed\n", ran)
	}
	return nil
}

// WriteLint writes the lint findings of tree's manifests to w, as text
// (two lines each: the finding, then the fix) or as a JSON array, and
// returns how many there are.
func WriteLint(w io.Writer, tree *manifest.Tree, asJSON bool) (int, error) {
	findings := Lint(tree.Lines)
	if asJSON {
		if findings == nil {
			findings = []Finding{}
		}
		data, err := json.MarshalIndent(findings, "", "  ")
		if err != nil {
			return 0, err
		}
		_, err = w.Write(append(data, '\n'))
		return len(findings), err
	}
	for _, f := range findings {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return 0, err
		}
	}
	return len(findings), nil
}

// Verify runs the policy tests of tree as every apply does: silent when
// they pass (or there are none); else it writes the failures to w and
// returns an error wrapping ErrTestsFailed, and the caller writes nothing.
func Verify(w io.Writer, tree *manifest.Tree) error {
	tests, err := LoadTests(tree)
	if err != nil || len(tests) == 0 {
		return err
	}
	failures, ran, err := Run(tree, tests)
	if err != nil {
		return err
	}
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%w: %d of %d (nothing written; agents-setup --check runs them)", ErrTestsFailed, len(failures), ran)
	}
	return nil
}
