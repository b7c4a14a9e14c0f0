package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStartedByGit reads a fake /proc: git anywhere among the ancestors
// counts, a process named "(git)" or "git x" does not, and init ends the
// walk.
func TestStartedByGit(t *testing.T) {
	self := os.Getpid()
	tests := []struct {
		name  string
		chain []string // comm of the parent, grandparent, ...
		want  bool
	}{
		{"parent git", []string{"git"}, true},
		{"hook script under git", []string{"sh", "git"}, true},
		{"deeper", []string{"sh", "sh", "nohup", "git", "bash"}, true},
		{"a shell", []string{"bash", "login"}, false},
		{"lookalikes", []string{"(git)", "git x", "git)"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			old := procRoot
			procRoot = root
			t.Cleanup(func() { procRoot = old })
			write := func(pid, ppid int, comm string) {
				dir := filepath.Join(root, strconv.Itoa(pid))
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "stat"), []byte(strconv.Itoa(pid)+" ("+comm+") S "+strconv.Itoa(ppid)+" 1 1 0 -1\n"), 0o644)
			}
			pid := self
			write(pid, 100, "agents-setup")
			for i, comm := range tc.chain {
				ppid := 101 + i
				if i == len(tc.chain)-1 {
					ppid = 1
				}
				write(100+i, ppid, comm)
			}
			if got := startedByGit(); got != tc.want {
				t.Errorf("startedByGit = %v, want %v", got, tc.want)
			}
		})
	}
}
