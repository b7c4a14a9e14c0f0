package gate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// What approving a line lends it under the run-time layer is read from
// the line's own words: the paths it writes, as named and resolved, and
// whether a privilege runner (sudo, doas, pkexec, su, run0) runs one of
// its commands. A runner that is not a word of the line lends nothing.
func TestApprovalGrant(t *testing.T) {
	proj, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	link := filepath.Join(out, "link")
	if err := os.Symlink(filepath.Join(out, "target"), link); err != nil {
		t.Fatal(err)
	}
	g := New(Options{Scope: NewScope(proj), Dir: proj})
	tests := []struct {
		line       string
		writable   []string
		privileged bool
	}{
		{line: "make"},
		{line: "echo x > " + out + "/f", writable: []string{out + "/f"}},
		{line: "echo x >> notes.txt", writable: []string{proj + "/notes.txt"}},
		{line: "echo x > " + link, writable: []string{link, out + "/target"}},
		{line: "cp a b " + out + "/dir/", writable: []string{out + "/dir"}},
		{line: "sudo apt-get install -y x", privileged: true},
		{line: "echo x | sudo tee /etc/hosts", writable: []string{"/etc/hosts"}, privileged: true},
		{line: "env FOO=1 doas make install", privileged: true},
		{line: "pkexec make", privileged: true},
		{line: "su -c 'make install'", privileged: true},
		{line: "sudo -s", privileged: true},
		{line: "run0 true", privileged: true},
		{line: "sudo-like make"},
		{line: "$SUDO make"},
		{line: "echo sudo make"},
		{line: "echo x > $OUT/f"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		if seen[tc.line] {
			t.Fatalf("duplicate input %q", tc.line)
		}
		seen[tc.line] = true
		t.Logf("input: %q", tc.line)
		d := g.DecideBash(tc.line)
		if d.Covers == nil {
			t.Fatalf("%q: nothing to cover", tc.line)
		}
		if !slices.Equal(d.Covers.Writable, tc.writable) || d.Covers.Privileged != tc.privileged {
			t.Errorf("%q: writable %q privileged %v, want %q %v", tc.line, d.Covers.Writable, d.Covers.Privileged, tc.writable, tc.privileged)
		}
		if ap := d.Approve(AnswerOnce, ByTerminal, proj, time.Now()); ap != nil && (!slices.Equal(ap.Writable, d.Covers.Writable) || ap.Privileged != d.Covers.Privileged) {
			t.Errorf("%q: the approval drops what the decision covers: %+v", tc.line, ap)
		}
	}
}
