//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// withoutLandlock makes this test binary one where Landlock is missing
// (landlock_create_ruleset fails with ENOSYS), when TestLayerRequired
// starts it so (AGENT_SHIM_TEST_WITHOUT_LANDLOCK=1: the test binary's
// own switch, which no product code reads).
func withoutLandlock() {
	if os.Getenv("AGENT_SHIM_TEST_WITHOUT_LANDLOCK") != "1" {
		return
	}
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_LANDLOCK_CREATE_RULESET, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		panic(errno)
	}
}

// Where the kernel lacks the layer, the run-time tests skip and say what
// is missing; where CI requires the layer (AGENT_SHIM_TEST_LAYER=required),
// they fail.
func TestLayerRequired(t *testing.T) {
	if os.Getenv("AGENT_SHIM_TEST_WITHOUT_LANDLOCK") == "1" {
		return
	}
	if _, err := exec.LookPath("git"); err != nil {
		skipLacking(t, "no git")
	}
	for _, required := range []bool{false, true} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRuntimeNeverAllow$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "AGENT_SHIM_TEST_LAYER=", "AGENT_SHIM_TEST_WITHOUT_LANDLOCK=1")
		if required {
			cmd.Env = append(cmd.Env, "AGENT_SHIM_TEST_LAYER=required")
		}
		out, err := cmd.CombinedOutput()
		s := string(out)
		switch {
		case !strings.Contains(s, "Landlock is not available"):
			t.Errorf("required %v: the missing feature is not named:\n%s", required, s)
		case !required && (err != nil || !strings.Contains(s, "--- SKIP: TestRuntimeNeverAllow")):
			t.Errorf("not required: %v, want a skip:\n%s", err, s)
		case required && (err == nil || !strings.Contains(s, "--- FAIL: TestRuntimeNeverAllow")):
			t.Errorf("required: %v, want a failure:\n%s", err, s)
		}
	}
}
