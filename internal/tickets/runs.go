package tickets

import (
	"fmt"
	"github.com/agent-shim/agent-shim/statefile"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A run record is how the hook learns that the agent calling it runs
// under `agent-shim run`, and so that every shell line the agent runs is
// under the run-time layer: while `agent-shim run` supervises a program
// with the layer, it keeps a file runs/<pid>.<start> in the state
// directory naming its own process (its pid and its start time, which
// tell it from a later process with the same pid). The hook, run by the
// agent, looks for its ancestors there. A process cannot fake its parent
// chain, and no process of the tree can write the state directory, so
// neither the call's input nor anything a line sets can make the hook
// believe it.

// maxAncestors bounds how far up the process tree the hook looks.
const maxAncestors = 16

// RecordRun records this process as one that supervises a program under
// the run-time layer; remove takes the record away when it stops. treeLog
// is an empty file beside the record (<record>.log) where the hook under
// the run writes its decisions (RunLog): no process of the tree can write
// the decision log, so the run takes them in when its program ends, as
// the tree's word (decisionlog.Entry.Tree).
func (s Store) RecordRun() (treeLog string, remove func(), err error) {
	start, ok := startTime(os.Getpid())
	if !ok {
		return "", func() {}, fmt.Errorf("recording the run: no start time for process %d", os.Getpid())
	}
	dir := filepath.Join(s.Dir, "runs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", func() {}, fmt.Errorf("recording the run: %w", err)
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+"."+start)
	treeLog = path + ".log"
	for _, p := range []string{path, treeLog} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|statefile.NoWait, 0o600)
		if err != nil {
			os.Remove(path)
			return "", func() {}, fmt.Errorf("recording the run: %w", err)
		}
		f.Close()
	}
	return treeLog, func() { os.Remove(path); os.Remove(treeLog) }, nil
}

// UnderRun reports whether a process above this one is recorded as
// supervising its program under the run-time layer (RecordRun).
func (s Store) UnderRun() bool {
	_, ok := s.runAbove()
	return ok
}

// RunLog is the tree's log of the run above this process (RecordRun),
// when there is one: one lstat and one read of a directory when no run is
// recorded at all.
func (s Store) RunLog() (string, bool) {
	dir := filepath.Join(s.Dir, "runs")
	if names, err := readNames(dir); err != nil || len(names) == 0 {
		return "", false
	}
	rec, ok := s.runAbove()
	if !ok {
		return "", false
	}
	if fi, err := os.Lstat(rec + ".log"); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return rec + ".log", true
}

// readNames reads the names in dir, unsorted.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// runAbove is the record of the process above this one that supervises
// it under the run-time layer (RecordRun).
func (s Store) runAbove() (record string, ok bool) {
	dir := filepath.Join(s.Dir, "runs")
	if _, err := os.Lstat(dir); err != nil {
		return "", false
	}
	pid := os.Getppid()
	for range maxAncestors {
		if pid <= 1 {
			return "", false
		}
		start, parent, _, ok := procStat(pid)
		if !ok {
			return "", false
		}
		rec := filepath.Join(dir, strconv.Itoa(pid)+"."+start)
		if fi, err := os.Lstat(rec); err == nil && fi.Mode().IsRegular() {
			return rec, true
		}
		pid = parent
	}
	return "", false
}

// startTime is the start time of process pid, as /proc says it (clock
// ticks since boot); ok is false where there is no /proc.
func startTime(pid int) (string, bool) {
	start, _, _, ok := procStat(pid)
	return start, ok
}

// Process returns the start time (which tells a process from a later one
// with the same id), the parent and the session of process pid; ok is
// false where the system does not tell (no /proc).
func Process(pid int) (start string, parent, session int, ok bool) { return procStat(pid) }

// procStat reads the start time, the parent and the session of process
// pid from /proc/<pid>/stat.
func procStat(pid int) (start string, parent, session int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, 0, false
	}
	// pid (comm) state ppid pgrp session … starttime (the 22nd
	// field); comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 {
		return "", 0, 0, false
	}
	parent, err1 := strconv.Atoi(f[1])
	session, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return f[19], parent, session, true
}
