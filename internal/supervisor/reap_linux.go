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
	before := childSet()
	st, err := run()
	if err == nil {
		st.Ended = endChildren(before, false)
	}
	return st, err
}

// childSet is the set of this process's children now: what endChildren
// leaves alone (they are not the line's).
func childSet() map[int]bool {
	m := map[int]bool{}
	for _, pid := range children() {
		m[pid] = true
	}
	return m
}

// filtered reports whether the process pid runs under a seccomp filter:
// the tree's processes do, this process's other children do not.
func filtered(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	return err == nil && bytes.Contains(data, []byte("\nSeccomp:\t2\n"))
}

// endChildren kills every child of this process, which as a subreaper
// inherits what the tree left running (a process the tree started whose
// parent ended), and reaps them, until none is left; it returns how many
// it ended. A process that forks meanwhile leaves its child to this
// process too, which the next round ends. Only this process's
// descendants are touched: not another session's.
func endChildren(before map[int]bool, tree bool) int {
	ended := map[int]bool{}
	for round := 0; round < 1000; round++ {
		var kids []int
		for _, pid := range children() {
			// Not a child this process had before the line, nor (with
			// tree) one outside the tree's filter: another part of this
			// process's.
			if !before[pid] && (!tree || ended[pid] || filtered(pid)) {
				kids = append(kids, pid)
			}
		}
		for _, pid := range kids {
			// A child is not reaped before this process waits for it:
			// its pid names it until then.
			if unix.Kill(pid, unix.SIGKILL) == nil {
				ended[pid] = true
			}
		}
		// Reap the ones killed (not others': their waits are theirs).
		var ws unix.WaitStatus
		waiting := false
		for pid := range ended {
			got, err := unix.Wait4(pid, &ws, unix.WNOHANG|unix.WALL, nil)
			switch {
			case err == unix.EINTR, err == nil && got == 0:
				waiting = true
			}
		}
		if len(kids) == 0 && !waiting {
			return len(ended)
		}
		time.Sleep(time.Millisecond) // killed, not yet dead; or new orphans
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
