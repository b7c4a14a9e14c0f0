package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// tree builds a project and an outside directory under a temp dir, with
// links into and out of the project.
func tree(t *testing.T) (base, proj, out string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj = filepath.Join(base, "proj")
	out = filepath.Join(base, "outside")
	for _, d := range []string{proj + "/src/pkg", out + "/secret", base + "/data/sub", base + "/logs"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{proj + "/src/main.go", out + "/secret/key", base + "/logs/a.log", base + "/logs/a.txt", base + "/one"} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		proj + "/escape":       out,             // absolute link out of the project
		proj + "/src/up":       "../../outside", // relative link out
		proj + "/inner":        "src/pkg",       // link that stays inside
		proj + "/dangling":     out + "/new",    // link to a file that does not exist yet
		proj + "/loop":         "loop",          // a loop
		base + "/outside/back": proj,            // a link from outside into the project
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	return base, proj, out
}

func TestScopeContains(t *testing.T) {
	base, proj, out := tree(t)
	s := NewScope(proj)
	for _, p := range []string{base + "/data/...", base + "/logs/*.log", base + "/one", "rel/..."} {
		if err := s.allow(p); err != nil {
			t.Fatalf("Allow(%q): %v", p, err)
		}
	}
	tests := []struct {
		in   string
		want bool
	}{
		{proj, true},
		{proj + "/src/main.go", true},
		{proj + "/src/new/deeper/file.go", true}, // does not exist yet
		{"src/main.go", true},                    // relative to the first root
		{"escape/../x", false},                   // relative, .. after a link out
		{proj + "/src/../src/main.go", true},
		{proj + "/../outside/secret/key", false}, // .. out of the root
		{proj + "/src/../../outside", false},
		{proj + "2/file", false},  // a sibling sharing the prefix
		{proj + "/escape", false}, // symlink out of the scope
		{proj + "/escape/secret/key", false},
		{proj + "/src/up/secret/key", false}, // relative symlink out
		{proj + "/inner/x.go", true},         // symlink that stays inside
		{proj + "/dangling", false},          // would create a file outside
		{proj + "/loop/x", false},            // cannot be resolved
		{proj + "/new/../escape/secret/key", false},
		{proj + "/new/../src/main.go", true},
		{proj + "/src/main.go/x", true},   // a file used as a directory: the write fails inside
		{out + "/back/src/main.go", true}, // lands inside the project
		{out + "/secret/key", false},
		{base + "/data", true}, // a tree contains its root
		{base + "/data/sub/x/y", true},
		{base + "/database", false},
		{base + "/logs/a.log", true},
		{base + "/logs/b.log", true}, // a glob for files not there yet
		{base + "/logs/a.txt", false},
		{base + "/logs/x/a.log", false},
		{base + "/one", true},
		{base + "/one/two", false},
		{proj + "/rel/file", true}, // relative pattern from the first root
		{"/", false},
		{"", false},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.in] {
			t.Fatalf("duplicate input %q", tc.in)
		}
		seen[tc.in] = true
		t.Logf("input: %q", tc.in)
		if got := s.contains(tc.in); got != tc.want {
			t.Errorf("Contains(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if err := s.allow(out + "/secret/key"); err != nil {
		t.Fatal(err)
	}
	if !s.contains(proj + "/escape/secret/key") {
		t.Errorf("after Allow: a link to the allowed file is still outside")
	}
	if s.contains(out + "/secret/other") {
		t.Errorf("Allow of a file allowed its sibling")
	}
}

func TestScopeRootThroughLink(t *testing.T) {
	base, proj, _ := tree(t)
	link := filepath.Join(base, "projlink")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	s := NewScope(link)
	if !s.contains(proj + "/src/main.go") {
		t.Errorf("root given through a link: the real path is outside")
	}
	if !s.contains(link + "/src/main.go") {
		t.Errorf("root given through a link: the link path is outside")
	}
	if s.contains(link + "/escape/secret/key") {
		t.Errorf("a link out of a linked root is inside")
	}
}

func TestScopeRefuses(t *testing.T) {
	s := NewScope()
	for _, p := range []string{"", "/...", "/*", "/**", "rel/x", "/a*/..."} {
		if err := s.allow(p); err == nil {
			t.Errorf("Allow(%q): no error", p)
		}
	}
	if s.contains("/etc/passwd") || s.contains("x") {
		t.Errorf("an empty scope contains something")
	}
	var nilScope *Scope
	if nilScope.contains("/x") {
		t.Errorf("a nil scope contains something")
	}
}
