//go:build linux

package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// EndingChildren runs run (a program run as a child of this process,
// unsupervised, where the layer is unavailable) with this process as a
// subreaper, and then ends what the program left running (endChildren),
// so that nothing of the line writes after the caller's undo; the
// status says how many it ended (Status.Ended).
func EndingChildren(run func() (Status, error)) (Status, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err == nil {
		defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}
	st, err := run()
	if err == nil {
		st.Ended = endChildren()
	}
	return st, err
}

// endChildren kills every child of this process, which as a subreaper
// inherits what the tree left running (a process the tree started whose
// parent ended), and reaps them, until none is left; it returns how many
// it ended. A process that forks meanwhile leaves its child to this
// process too, which the next round ends. Only this process's
// descendants are touched: not another session's.
func endChildren() int {
	ended := map[int]bool{}
	for round := 0; round < 1000; round++ {
		kids := children()
		for _, pid := range kids {
			// A child is not reaped before this process waits for it:
			// its pid names it until then.
			if unix.Kill(pid, unix.SIGKILL) == nil {
				ended[pid] = true
			}
		}
		var ws unix.WaitStatus
		reaped := false
		for {
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			reaped = true
		}
		if len(kids) == 0 && !reaped {
			if pid, err := unix.Wait4(-1, &ws, unix.WALL|unix.WNOHANG, nil); err == unix.ECHILD || pid == 0 && len(children()) == 0 {
				return len(ended)
			}
		}
		if len(kids) > 0 && !reaped {
			time.Sleep(time.Millisecond) // killed, not yet dead
		}
	}
	return len(ended)
}

// children are the pids of this process's children, from
// /proc/self/task/*/children (every thread's), else from every
// process's parent in /proc.
func children() []int {
	var out []int
	tasks, err := os.ReadDir("/proc/self/task")
	ok := err == nil
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			ok = false
			break
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	if ok {
		return out
	}
	out = nil
	self := os.Getpid()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid: comm may hold anything but ends at the
		// last ')'.
		rest := string(data[bytes.LastIndexByte(data, ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == self {
				out = append(out, pid)
			}
		}
	}
	return out
}
