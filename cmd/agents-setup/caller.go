package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRoot is where startedByGit reads processes; a test seam.
var procRoot = "/proc"

// errStartedByGit refuses a run that would write for a person when git
// started it: a hook, an alias or a configured command (core.fsmonitor,
// a filter) runs whatever the repository's files say, and those are the
// agent's to write. The hooks' own entry point, "hooks run", only
// narrows the policy and is not refused.
var errStartedByGit = errors.New("agents-setup was started by git (a hook, an alias or a command in the repository's configuration), not by a person: it applies, resets, rolls back and installs hooks only for a person (nothing written)")

// startedByGit reports whether a process named git is among this
// process's ancestors (Linux; elsewhere it knows nothing and says no).
// It is a second line behind hooks.Verify: a process that detaches from
// git (a double fork, setsid) is no longer its descendant.
func startedByGit() bool {
	pid := os.Getpid()
	for range 32 {
		ppid, _, ok := parentOf(pid)
		if !ok || ppid <= 1 {
			return false
		}
		if _, comm, ok := parentOf(ppid); ok && comm == "git" {
			return true
		}
		pid = ppid
	}
	return false
}

// parentOf reads the parent pid and the command name of pid from
// /proc/<pid>/stat: "pid (comm) state ppid ...", comm holding any byte.
func parentOf(pid int) (ppid int, comm string, ok bool) {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	s := string(data)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return 0, "", false
	}
	comm = s[open+1 : close]
	f := strings.Fields(s[close+1:])
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, comm, err == nil
}
