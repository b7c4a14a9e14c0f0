package policycheck

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/google/go-cmp/cmp"
)

func loadTree(t *testing.T, root string) *manifest.Tree {
	t.Helper()
	tree, err := manifest.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// The Fuchsia-like fixture's tests (root and vendor overlay) all pass.
func TestCheckPasses(t *testing.T) {
	tree := loadTree(t, fixture(t, "fuchsia"))
	var out strings.Builder
	if err := Check(&out, tree); err != nil {
		t.Fatalf("Check: %v\n%s", err, out.String())
	}
	if got, want := out.String(), "37 policy tests passed\n"; got != want {
		t.Errorf("Check printed %q, want %q", got, want)
	}
	out.Reset()
	if err := Check(&out, tree, "read-only"); err != nil || out.String() != "9 policy tests passed\n" {
		t.Errorf("Check(read-only): %v, %q", err, out.String())
	}
	if err := Check(&out, tree, "no-such-profile"); err == nil || !strings.Contains(err.Error(), `unknown profile "no-such-profile"`) {
		t.Errorf("Check(no-such-profile): %v", err)
	}
}

// Failing tests name the file, line, profile, expected and actual verdict
// and the rule that decided.
func TestCheckFails(t *testing.T) {
	root := fixture(t, "fuchsia")
	tree := loadTree(t, root)
	tests, err := ParseTests(".agents/config/tests.txt", []byte(`profile: local-changes
deny git status
allow git push --force origin main
allow git status; rm -rf /
ask fx build
default git stauts
profile: read-only
allow git commit -m x
allow env rm -rf /tmp/x
`))
	if err != nil {
		t.Fatal(err)
	}
	failures, ran, err := Run(tree, tests)
	if err != nil || ran != 7 {
		t.Fatalf("Run: ran %d, %v", ran, err)
	}
	var got []string
	for _, f := range failures {
		got = append(got, f.String())
	}
	want := []string{
		".agents/config/tests.txt:2: local-changes: git status: expected deny, got allow (matches an allow rule: `git status` (.agents/config/permissions/read_only.txt:2))",
		".agents/config/tests.txt:3: local-changes: git push --force origin main: expected allow, got deny (matches a deny rule: `git push --force` (.agents/config/permissions/never_allow.txt:1))",
		".agents/config/tests.txt:4: local-changes: git status; rm -rf /: expected allow, got deny (rm -rf /: matches a deny rule: `rm -rf /` (.agents/config/permissions/never_allow.txt:3))",
		".agents/config/tests.txt:5: local-changes: fx build: expected ask, got allow (matches an allow rule: `fx build` (.agents/config/permissions/local_changes.txt:6))",
		// A typo in a rule allows the typo, and nothing else.
		".agents/config/tests.txt:6: local-changes: git stauts: expected default, got allow (matches an allow rule: `git stauts` (.agents/config/permissions/read_only.txt:7))",
		".agents/config/tests.txt:8: read-only: git commit -m x: expected allow, got default (no rule matches)",
		// rm writes what it removes: outside the checkout, and at
		// read-only, a write is asked about as `>` is.
		".agents/config/tests.txt:9: read-only: env rm -rf /tmp/x: expected allow, got ask (writes /tmp/x (rm))",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestCheckErrTestsFailed(t *testing.T) {
	root := fixture(t, "fuchsia")
	if err := writeFile(root, ".agents/config/tests.txt", "deny git status\n"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := Check(&out, loadTree(t, root), "full-access")
	if !errors.Is(err, ErrTestsFailed) {
		t.Fatalf("Check: %v, want ErrTestsFailed", err)
	}
	if !strings.HasPrefix(out.String(), ".agents/config/tests.txt:1: full-access: git status: expected deny, got allow (") {
		t.Errorf("output: %q", out.String())
	}
}

func TestParseTestsErrors(t *testing.T) {
	pinHome(t)
	tests := []struct{ in, want string }{
		{"allow\n", "t.txt:1: allow what? a command line must follow"},
		{"# c\nmaybe git status\n", `t.txt:2: want allow, ask, deny or default and a command, or profile: …; got "maybe git status"`},
		{"profile: read-only, yolo\n", `t.txt:1: unknown profile "yolo"`},
		{"Allow git status\n", `t.txt:1: want allow, ask, deny or default`},
	}
	for _, tc := range tests {
		t.Logf("input: %q", tc.in)
		_, err := ParseTests("t.txt", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTests(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	ts, err := ParseTests("t.txt", []byte("\r\n  # x\nallow  git status  \r\nprofile: full-access\ndeny git push -f\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Test{
		{File: "t.txt", Line: 3, Want: "allow", Command: "git status", Profiles: manifest.Profiles},
		{File: "t.txt", Line: 5, Want: "deny", Command: "git push -f", Profiles: []string{"full-access"}},
	}
	if diff := cmp.Diff(want, ts); diff != "" {
		t.Errorf("ParseTests (-want +got):\n%s", diff)
	}
}

// The policy of a profile is what agents-setup writes: a line in a
// category the profile leaves out decides nothing, and a line in two
// lists is decided by the stricter.
func TestPolicyProfiles(t *testing.T) {
	pinHome(t)
	lines := []manifest.Line{
		{Text: "git commit", Category: "local_changes", Overlay: ".", File: "l.txt", Num: 1},
		{Text: "git push", Category: "external_changes", Overlay: ".", File: "e.txt", Num: 1},
		{Text: "git push", Category: "read_only", Overlay: ".", File: "r.txt", Num: 1},
	}
	for _, tc := range []struct {
		profile, cmd, want string
	}{
		{"read-only", "git commit -m x", "default"},
		{"local-changes", "git commit -m x", "allow"},
		{"read-only", "git push", "ask"},
		{"external-changes", "git push", "allow"},
		{"full-access", "make", "allow"},
		{"local-changes", "make", "default"},
	} {
		g, err := Gate(&manifest.Tree{Root: t.TempDir(), Lines: lines}, tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.DecideBash(tc.cmd).Verdict.String(); got != tc.want {
			t.Errorf("%s: %s: got %s, want %s", tc.profile, tc.cmd, got, tc.want)
		}
	}
}

func TestVerify(t *testing.T) {
	root := fixture(t, "fuchsia")
	var out strings.Builder
	if err := Verify(&out, loadTree(t, root)); err != nil || out.Len() != 0 {
		t.Fatalf("Verify on passing tests: %v, %q", err, out.String())
	}
	if err := writeFile(root, "vendor/google/.agents/config/tests.txt", "profile: read-only\nallow git push origin main\n"); err != nil {
		t.Fatal(err)
	}
	err := Verify(&out, loadTree(t, root))
	if !errors.Is(err, ErrTestsFailed) || !strings.Contains(err.Error(), "1 of 36") {
		t.Fatalf("Verify: %v", err)
	}
	if want := "vendor/google/.agents/config/tests.txt:2: read-only: git push origin main: expected allow, got ask (matches an ask rule: `git push` (.agents/config/permissions/external_changes.txt:1))\n"; out.String() != want {
		t.Errorf("Verify printed %q, want %q", out.String(), want)
	}
}

// TestCheckUsesProgramFacts: the policy tests decide with the overlays'
// program facts, as the hook does with what apply copies into
// config.json. `mytool --hook CMD` runs CMD, so a test that expects it
// allowed fails, and one that expects ask passes.
func TestCheckUsesProgramFacts(t *testing.T) {
	root := filepath.Join(pinHome(t), "tree")
	for rel, text := range map[string]string{
		".jiri_root/.keep":                         "",
		".agents/config/permissions/read_only.txt": "mytool\n",
		".agents/config/programs.txt":              "[mytool]\nexec --hook\n",
		".agents/config/tests.txt":                 "profile: local-changes\nallow mytool build\nallow mytool --hook \"echo hi\"\n",
	} {
		if err := writeFile(root, rel, text); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	err := Verify(&out, loadTree(t, root))
	if err == nil || !strings.Contains(out.String(), `mytool --hook "echo hi"`) || strings.Contains(out.String(), "mytool build") {
		t.Fatalf("Verify: %v\n%s\nwant exactly the --hook test to fail", err, out.String())
	}
	if err := writeFile(root, ".agents/config/tests.txt", "profile: local-changes\nallow mytool build\nask mytool --hook \"echo hi\"\n"); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Verify(&out, loadTree(t, root)); err != nil {
		t.Fatalf("Verify: %v\n%s", err, out.String())
	}
}
