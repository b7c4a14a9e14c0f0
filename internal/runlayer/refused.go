package runlayer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/agents"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// Landlock refuses a write with EACCES and says nothing: the program's own
// error ("permission denied") is all the tree sees, and the person cannot
// tell it from a file's mode. So the tree's standard error is read on its
// way to the agent, and a path named in a line that reports a refusal
// (permission denied, EACCES), or in the lines
// just before one (cargo names the file first), is a refused write of the
// layer's when it lies outside what the line may write and this process,
// which runs as the person, could write it. When the line then fails,
// agent-shim says so, in its words: the path, the writable set, the
// config key. That is the only use of the programs' text, and only for a
// hint: nothing is decided by it.
//
// The tree's standard error is read where it is a pipe or a socket (an
// agent's); a terminal or a regular file is handed to the tree as it is
// (a program checks what its output is), and the program's own message is
// all there is. When standard output is the same pipe, it is read too, as
// one pipe, so that their order holds.

// maxRefused is how many refused paths a line reports.
const maxRefused = 3

// refusedWrites collects the paths of the refusals the tree's standard
// error reports.
type refusedWrites struct {
	mu    sync.Mutex
	paths []string
	// part is the end of the stream not yet ended by a newline; recent
	// the paths of the last lines.
	part   []byte
	recent [][]string
	// readOnly are the words of the lines that report a read-only file
	// system: the protected paths the line had read-only are among them
	// (see Run.reportProtected).
	readOnly []string
}

// readOnlyMark is what a line that reports a write to a read-only file
// system contains (EROFS).
var readOnlyMark = []byte("ead-only file system")

// marks are what a line that reports a refused write contains: Landlock's
// EACCES. Not EPERM: that is an execution the layer refused (said already,
// with its rule), or a metadata call.
var marks = [][]byte{[]byte("ermission denied"), []byte("EACCES")}

// Write reads p as the next bytes of the stream; it never fails.
func (w *refusedWrites) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(w.part)+len(rest) <= 4096 {
				w.part = append(w.part, rest...)
			}
			break
		}
		line := rest[:i]
		if len(w.part) > 0 {
			line = append(w.part, line...)
			w.part = w.part[:0]
		}
		w.line(line)
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (w *refusedWrites) line(line []byte) {
	if bytes.Contains(line, readOnlyMark) && len(w.readOnly) < 64 {
		for _, f := range bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\'' || r == '"' || r == '`' }) {
			if f = bytes.TrimRight(f, ":,.;"); len(f) > 0 && len(f) < 4096 {
				w.readOnly = append(w.readOnly, string(f))
			}
		}
	}
	paths := absPaths(line)
	refusal := slices.ContainsFunc(marks, func(m []byte) bool { return bytes.Contains(line, m) })
	if refusal {
		cands := paths
		if len(cands) == 0 {
			for _, r := range w.recent {
				cands = append(cands, r...)
			}
		}
		for _, p := range cands {
			if len(w.paths) < 4*maxRefused && !slices.Contains(w.paths, p) {
				w.paths = append(w.paths, p)
			}
		}
	}
	w.recent = append(w.recent, paths)
	if len(w.recent) > 3 {
		w.recent = w.recent[1:]
	}
}

// absPaths returns the absolute paths a line names: words that start with
// a slash, between blanks, quotes or brackets, without a trailing colon,
// comma or full stop.
func absPaths(line []byte) []string {
	var out []string
	for _, f := range bytes.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\'' || r == '"' || r == '`' || r == '(' || r == ')' || r == '[' || r == ']' || r == '<' || r == '>' || r == '\u2018' || r == '\u2019'
	}) {
		f = bytes.TrimRight(f, ":,.;")
		if len(f) > 1 && f[0] == '/' && len(f) < 4096 && !slices.Contains(out, string(f)) {
			out = append(out, filepath.Clean(string(f)))
		}
	}
	return out
}

// refused returns the paths the tree's messages named that the layer
// refused: outside writable (the line's writable paths), and writable by
// this process (so it was not the file's mode that refused it).
func (w *refusedWrites) refused(writable []string) []string {
	w.mu.Lock()
	paths := slices.Clone(w.paths)
	w.mu.Unlock()
	var roots []string
	for _, p := range writable {
		roots = append(roots, filepath.Clean(p))
		if r, err := filepath.EvalSymlinks(p); err == nil {
			roots = append(roots, r)
		}
	}
	inside := func(p string) bool {
		return slices.ContainsFunc(roots, func(r string) bool { return p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") })
	}
	var out []string
	for _, p := range paths {
		if inside(p) || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/") || strings.HasPrefix(p, "/dev/") {
			continue
		}
		// The nearest of it and its directories that exists: the one a
		// write or a creation needs.
		d := p
		for {
			if _, err := os.Lstat(d); err == nil || d == "/" {
				break
			}
			d = filepath.Dir(d)
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil || inside(real) || unix.Access(real, unix.W_OK) != nil {
			continue
		}
		out = append(out, p)
		if len(out) == maxRefused {
			break
		}
	}
	return out
}

// outFiles returns the files the tree gets as its standard output and
// error for stdout and stderr, the tree's standard error (and output,
// when they are one file) read by seen on its way, and the function that
// ends the copies after the program.
func outFiles(stdout, stderr io.Writer, seen io.Writer) (out, errf *os.File, done func()) {
	f, ok := stderr.(*os.File)
	if !ok {
		errf, doneErr := outFile(io.MultiWriter(stderr, seen))
		if stdout == stderr {
			return errf, errf, doneErr
		}
		out, doneOut := outFile(stdout)
		return out, errf, func() { doneOut(); doneErr() }
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || (st.Mode&unix.S_IFMT != unix.S_IFIFO && st.Mode&unix.S_IFMT != unix.S_IFSOCK) {
		out, doneOut := outFile(stdout)
		return out, f, doneOut
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		out, doneOut := outFile(stdout)
		return out, f, doneOut
	}
	copied := make(chan struct{})
	go func() {
		io.CopyBuffer(io.MultiWriter(f, seen), pr, make([]byte, 8<<10))
		close(copied)
	}()
	doneErr := func() {
		pw.Close()
		select {
		case <-copied:
			pr.Close()
		case <-time.After(100 * time.Millisecond):
			handOff(pr, f, copied)
		}
	}
	var so unix.Stat_t
	if o, ok := stdout.(*os.File); ok && unix.Fstat(int(o.Fd()), &so) == nil && so.Dev == st.Dev && so.Ino == st.Ino {
		return pw, pw, doneErr
	}
	out, doneOut := outFile(stdout)
	return out, pw, func() { doneOut(); doneErr() }
}

// handOff leaves the copy of pr to to a process of its own (cat), for
// what the line left running that still writes there after this process
// ends: the pipe's reader must outlive it, or the writer's next write
// fails (EPIPE) and may end it. Without a cat what comes later is lost.
func handOff(pr, to *os.File, copied chan struct{}) {
	defer pr.Close()
	pr.SetReadDeadline(time.Now())
	<-copied
	cat, err := exec.LookPath("cat")
	if err != nil {
		for _, p := range []string{"/bin/cat", "/usr/bin/cat"} {
			if _, err := os.Stat(p); err == nil {
				cat = p
				break
			}
		}
	}
	if cat == "" {
		return
	}
	pr.Fd() // blocking, for cat
	cmd := exec.Command(cat)
	cmd.Stdin, cmd.Stdout = pr, to
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// errRefusedWrite is what a line's refused writes are reported as.
var errRefusedWrite = errors.New("the run-time layer refused a write")

// reportRefused says, for a line that failed, which writes of it the
// layer refused (paths), and what the line may write: the scope, the
// temporary directories, the tree's caches; and how to allow it.
func (r *Run) reportRefused(paths []string) {
	if len(paths) == 0 {
		return
	}
	var where []string
	if roots := r.Gate.Scope().Roots(); len(roots) > 0 && r.Gate.Level() >= gate.LevelLocalChanges {
		where = append(where, "the scope "+strings.Join(roots, ", "))
	}
	where = append(where, "the temporary directories")
	for _, g := range r.State {
		where = append(where, "the agent's own "+g.Dir+" but for its settings, hooks and rules")
	}
	if root := cacheRoot(r.Getenv); root != "" {
		where = append(where, "the tree's caches in "+root)
	}
	for _, p := range paths {
		fmt.Fprintf(r.Stderr, "agent-shim: %v to %s: it is outside what a line may write (%s)\n", errRefusedWrite, p, strings.Join(where, ", "))
		r.logRefused(p)
	}
	p := paths[0]
	other := r.othersState(p)
	switch {
	case r.Agent == "run" && other != nil:
		fmt.Fprintf(r.Stderr, "agent-shim: hint: %s is %s's own directory: to let %s write it (but for its settings, hooks and rules), run it as agent-shim run --agent %s -- …\n", filepath.Dir(p), other.Title, other.Title, other.Name)
	case r.personsCache(p):
		fmt.Fprintf(r.Stderr, "agent-shim: hint: %s is the person's cache, read-only to the tree so that nothing a line leaves there runs at the person's next build; a line's tools have caches of their own (GOCACHE, GOMODCACHE, npm_config_cache, CARGO_HOME, XDG_CACHE_HOME are set for it): leave them as they are\n", p)
	case r.Gate.Level() < gate.LevelLocalChanges:
		fmt.Fprintf(r.Stderr, "agent-shim: hint: the profile in %s is read-only: lines write only the temporary directories and the tree's caches\n", r.Config)
	default:
		fmt.Fprintf(r.Stderr, "agent-shim: hint: to let lines write there, add %s (or %s/...) to agentShim.pathScope.allow in %s, or run the line yourself\n", p, filepath.Dir(p), r.Config)
	}
}

// readOnlyWords returns the words of the lines that reported a read-only
// file system.
func (w *refusedWrites) readOnlyWords() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.readOnly)
}

// othersState is the agent one of whose directories holds p, not on
// one of its guarded paths, when the directory is not one of r.State;
// nil otherwise.
func (r *Run) othersState(p string) *agents.Agent {
	for _, a := range agents.All {
		for _, d := range a.StateDirs(r.Getenv) {
			rel, ok := strings.CutPrefix(p, d+"/")
			if !ok || slices.ContainsFunc(r.State, func(g supervisor.Guarded) bool { return g.Dir == d }) {
				continue
			}
			if !a.IsGuarded(rel) {
				return a
			}
		}
	}
	return nil
}
