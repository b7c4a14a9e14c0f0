//go:build linux && (amd64 || arm64)

package inherited_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-shim/agent-shim/internal/supervisor/inherited"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "report" {
		lim, ok := inherited.Nofile()
		var now syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now)
		fmt.Printf("nofile %v %d/%d now %d\n", ok, lim.Cur, lim.Max, now.Cur)
		fs, ok := inherited.Files()
		fmt.Printf("files %v", ok)
		for _, f := range fs {
			fmt.Printf(" %d", f.Fd)
		}
		fmt.Println()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The soft RLIMIT_NOFILE is read before package syscall raises it: the
// order of initialization holds.
func TestNofile(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max < 300 {
		t.Skipf("hard RLIMIT_NOFILE %d: too low to lower the soft one below it", lim.Max)
	}
	// Setrlimit tells os/exec to give the child this limit, not the one
	// this process started with.
	low := syscall.Rlimit{Cur: 256, Max: lim.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	out, err := exec.Command(os.Args[0], "report").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := fmt.Sprintf("nofile true 256/%d now %d\n", lim.Max, lim.Max-1)
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("got %q, want %q (package syscall raises the soft limit to the hard one, less one)", out, want)
	}
}

// The descriptors inherited open are those not close-on-exec at start.
func TestFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// The child gets 4 and 6, 3 and 5 closed, and this process's own
	// inherited descriptors above them (os/exec closes none).
	want := "files true 4 6"
	fs, _ := inherited.Files()
	for _, f := range fs {
		if f.Fd > 6 {
			want += fmt.Sprintf(" %d", f.Fd)
		}
	}
	cmd := exec.Command(os.Args[0], "report")
	cmd.ExtraFiles = []*os.File{nil, r, nil, w} // fds 4 and 6
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), want+"\n") {
		t.Errorf("got %q, want %q", out, want)
	}
}
