package policycheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/manifest"
)

// TestsFile is an overlay's policy tests, beside its permissions/.
const TestsFile = "tests.txt"

// A Test is one line of a tests.txt: the verdict a command line must get.
//
//	# comments and blank lines are skipped
//	profile: read-only, local-changes
//	allow git status
//	deny git push --force origin main
//	ask git push origin main
//	default make
//
// A `profile: a, b` line names the profiles the tests after it run under,
// up to the next such line; before any, they run under all four. The
// command is the rest of the line after the verdict word, read as shell.
type Test struct {
	File     string   `json:"file"`     // relative to the checkout root
	Line     int      `json:"line"`     // 1-based
	Want     string   `json:"want"`     // allow, ask, deny or default
	Command  string   `json:"command"`  // the command line
	Profiles []string `json:"profiles"` // the profiles it runs under
}

// ParseTests reads a tests.txt named name (as reported in errors and in
// Test.File). A line that is neither a comment, a profile line nor a test
// is an error "name:line: problem".
func ParseTests(name string, data []byte) ([]Test, error) {
	var tests []Test
	profiles := manifest.Profiles
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimSpace(string(bytes.TrimSuffix(raw, []byte("\r"))))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "profile:"); ok {
			profiles = nil
			for _, p := range strings.Split(rest, ",") {
				p = strings.TrimSpace(p)
				if _, _, _, err := manifest.Lists(p); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
				}
				profiles = append(profiles, p)
			}
			continue
		}
		verdict, cmd, _ := strings.Cut(line, " ")
		switch verdict {
		case "allow", "ask", "deny", "default":
		default:
			return nil, fmt.Errorf("%s:%d: want allow, ask, deny or default and a command, or profile: …; got %q", name, n+1, line)
		}
		cmd = strings.TrimSpace(cmd)
		if cmd == "" {
			return nil, fmt.Errorf("%s:%d: %s what? a command line must follow", name, n+1, verdict)
		}
		tests = append(tests, Test{File: name, Line: n + 1, Want: verdict, Command: cmd, Profiles: profiles})
	}
	return tests, nil
}

// LoadTests reads the tests.txt of each overlay of tree, in overlay order:
// found the way manifests are, beside each overlay's permissions/.
func LoadTests(tree *manifest.Tree) ([]Test, error) {
	if tree.Root == "" {
		return nil, nil
	}
	var tests []Test
	for _, ov := range tree.Overlays {
		rel := manifest.ConfigDir + "/" + TestsFile
		if ov != "." {
			rel = ov + "/" + rel
		}
		data, err := os.ReadFile(filepath.Join(tree.Root, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading policy tests: %w", err)
		}
		ts, err := ParseTests(rel, data)
		if err != nil {
			return nil, err
		}
		tests = append(tests, ts...)
	}
	return tests, nil
}

// A Failure is a test whose command got another verdict.
type Failure struct {
	Test
	Profile string `json:"profile"`
	Got     string `json:"got"`
	Reason  string `json:"reason"` // the decision's reason: the rule that decided and where it is
}

func (f Failure) String() string {
	return fmt.Sprintf("%s:%d: %s: %s: expected %s, got %s (%s)", f.File, f.Line, f.Profile, f.Command, f.Want, f.Got, f.Reason)
}

// Run runs tests against the policies of tree's manifests, each under the
// profiles it names (only those in only, when only is not empty), and
// returns the failures in test order. The verdict is the gate's, as hook
// and shell mode decide: ask mode, the profile's level, the never-allow
// list, the checkout as the scope.
func Run(tree *manifest.Tree, tests []Test, only ...string) (failures []Failure, ran int, err error) {
	for _, p := range only {
		if _, _, _, err := manifest.Lists(p); err != nil {
			return nil, 0, err
		}
	}
	e := newEngine(tree)
	for _, t := range tests {
		for _, p := range t.Profiles {
			if len(only) > 0 && !slices.Contains(only, p) {
				continue
			}
			g, err := e.gate(p)
			if err != nil {
				return nil, ran, err
			}
			ran++
			d := g.DecideBash(t.Command)
			if got := d.Verdict.String(); got != t.Want {
				failures = append(failures, Failure{Test: t, Profile: p, Got: got, Reason: d.Reason})
			}
		}
	}
	return failures, ran, nil
}
