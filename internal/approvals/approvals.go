// Package approvals is agent-shim's approval log (one gate.Approval a
// line, in the state directory) and what it suggests: Recommend turns the
// approvals of shell commands into prefix grants.
package approvals

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
	"github.com/agent-shim/agent-shim/statefile"
)

// Path returns the approval log: $XDG_STATE_HOME/agent-shim/approvals.jsonl,
// else $HOME/.local/state/agent-shim/approvals.jsonl.
func Path(getenv func(string) string) (string, error) {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return "", errors.New("finding the approval log: neither XDG_STATE_HOME nor HOME is set")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "agent-shim", "approvals.jsonl"), nil
}

// Open opens the approval log for appending, creating it and its
// directory. Each approval is one write of one line to a file opened with
// O_APPEND, so processes logging at once do not interleave lines. It
// never waits on a FIFO planted in its place nor follows a link there
// (statefile.NoWait), and it must be a regular file.
func Open(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening approval log: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|statefile.NoWait, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening approval log: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("opening approval log: %s is not a regular file", path)
	}
	return f, nil
}

// maxLine bounds one line of the approval log.
const maxLine = 1 << 20

// Read reads an approval log. A line that is not an approval is
// an error naming its line number; a last line cut short (a writer that
// died mid-line) is skipped.
func Read(r io.Reader) ([]gate.Approval, error) {
	var out []gate.Approval
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("reading approvals: line %d: %w", n, err)
		}
		complete := strings.HasSuffix(line, "\n")
		if len(line) > maxLine {
			return out, fmt.Errorf("reading approvals: line %d: longer than %d bytes", n, maxLine)
		}
		if t := strings.TrimSpace(line); t != "" {
			var a gate.Approval
			if jerr := json.Unmarshal([]byte(t), &a); jerr != nil {
				if !complete {
					return out, nil // cut short by a writer that died
				}
				return out, fmt.Errorf("reading approvals: line %d: %v", n, jerr)
			}
			if a.Tool == "" || a.Decision == "" {
				return out, fmt.Errorf("reading approvals: line %d: missing tool or decision", n)
			}
			out = append(out, a)
		}
		if err != nil {
			return out, nil
		}
	}
}

// Recommendation is a suggested grant, from approvals.
type Recommendation struct {
	// Pattern is the words a command starts with: "npm run".
	Pattern string `json:"pattern"`
	// Grant is the agent's prefix grant for it: "command(npm run)".
	Grant string `json:"grant"`
	// Reason says why, in one line.
	Reason string `json:"reason"`
	// Evidence are the approved command lines, distinct, sorted.
	Evidence []string `json:"evidence"`
}

// minEvidence is how many approvals a recommendation needs.
const minEvidence = 2

// tooBroad are programs never recommended as a prefix: shells and
// interpreters run anything, runners run their arguments, and find runs
// -exec.
var tooBroad = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "csh": true,
	"tcsh": true, "busybox": true, "python": true, "python2": true, "python3": true,
	"node": true, "nodejs": true, "deno": true, "bun": true, "perl": true, "ruby": true,
	"php": true, "lua": true, "tclsh": true, "osascript": true, "pwsh": true, "powershell": true,
	"env": true, "sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true,
	"xargs": true, "find": true, "parallel": true, "eval": true, "exec": true, "command": true,
	"builtin": true, "nohup": true, "nice": true, "ionice": true, "timeout": true, "time": true,
	"stdbuf": true, "setsid": true, "chroot": true, "watch": true, "ssh": true, "script": true,
	"awk": true, "gawk": true, "sed": true,
}

// runsCode reports whether the program table (package programs) says a
// program runs code given on its command line: an interpreter with inline
// code (python -c, Rscript -e) or a program whose first operand is a
// script (sed, awk). A prefix grant for it would allow any code.
func runsCode(prog string) bool {
	tbl := programs.Builtin()
	p := tbl.Program(prog)
	if p == nil {
		p = tbl.Program(strings.TrimRight(prog, "0123456789.-"))
	}
	if p == nil {
		return false
	}
	for _, f := range p.Root.Facts() {
		if f.Kind == programs.Inline || f.Kind == programs.Script {
			return true
		}
	}
	return false
}

// needsSubcommand are programs too dangerous to recommend without a
// subcommand word: a bare prefix would allow deleting or overwriting
// anything.
var needsSubcommand = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "cp": true, "dd": true, "shred": true, "chmod": true,
	"chown": true, "chgrp": true, "ln": true, "install": true, "tee": true, "truncate": true,
	"kill": true, "pkill": true, "killall": true, "curl": true, "wget": true, "scp": true,
	"rsync": true, "git": true, "docker": true, "kubectl": true,
}

// Recommend turns approvals of shell commands into suggested prefix
// grants. Commands are grouped by program and subcommand (`npm run build`
// and `npm run test` give `npm run`), narrowed to the words every approval
// of the group shares; a group needs at least two approvals. It is never
// over-broad: no shell, interpreter or runner (sh, python, env, sudo, doas,
// xargs, find, …), no bare destructive program (rm, dd, …), no glob, no
// command it cannot read statically. The order is deterministic (by
// pattern).
func Recommend(approvals []gate.Approval) []Recommendation {
	type group struct {
		words    []string // the common prefix so far
		count    int
		evidence map[string]bool
	}
	groups := map[string]*group{}
	for _, a := range approvals {
		if !gate.IsCommandTool(a.Tool) {
			continue
		}
		s, err := shellparse.Parse(a.Key)
		if err != nil {
			continue
		}
		for _, cmd := range s.Commands {
			words, ok := recommendWords(cmd)
			if !ok {
				continue
			}
			key := strings.Join(words[:min(2, len(words))], " ")
			gr := groups[key]
			if gr == nil {
				gr = &group{words: words, evidence: map[string]bool{}}
				groups[key] = gr
			} else {
				gr.words = commonPrefix(gr.words, words)
			}
			gr.count++
			gr.evidence[a.Key] = true
		}
	}
	var out []Recommendation
	for _, gr := range groups {
		if gr.count < minEvidence {
			continue
		}
		if len(gr.words) < 2 && needsSubcommand[gr.words[0]] {
			continue
		}
		ev := make([]string, 0, len(gr.evidence))
		for e := range gr.evidence {
			ev = append(ev, e)
		}
		slices.Sort(ev)
		pat := strings.Join(gr.words, " ")
		out = append(out, Recommendation{
			Pattern:  pat,
			Grant:    "command(" + pat + ")",
			Reason:   fmt.Sprintf("approved %d times in %d distinct command lines starting with `%s`", gr.count, len(ev), pat),
			Evidence: ev,
		})
	}
	slices.SortFunc(out, func(a, b Recommendation) int { return strings.Compare(a.Pattern, b.Pattern) })
	return out
}

// allowAll allows every command: what it says of a command is the argv
// as the rules see it.
var allowAll = sync.OnceValue(func() *matcher.Policy {
	p := matcher.New()
	p.Add(matcher.Allow, "command(*)", matcher.Source{})
	return p
})

// recommendWords returns the words of a command that a recommendation may
// name: program and its leading subcommand words, normalized as the
// matcher sees them (basename, git's global options dropped).
func recommendWords(cmd *shellparse.Command) ([]string, bool) {
	if !cmd.Static() || len(cmd.Args) == 0 || cmd.Decl != "" || len(cmd.Nesting) > 0 {
		return nil, false
	}
	argv := allowAll().DecideCommand(cmd).Argv
	if len(argv) == 0 || tooBroad[argv[0]] || runsCode(argv[0]) || strings.ContainsAny(argv[0], "/*?[") {
		return nil, false
	}
	words := []string{argv[0]}
	for _, w := range argv[1:] {
		if !subcommandWord(w) {
			break
		}
		words = append(words, w)
	}
	return words, true
}

// subcommandWord reports whether w reads as a subcommand (run, build,
// run-script, test:unit), not a flag, path, glob or value.
func subcommandWord(w string) bool {
	if w == "" {
		return false
	}
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':'):
		default:
			return false
		}
	}
	return true
}

func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// ReadFile reads the approval log at path; a missing log has no
// approvals.
func ReadFile(path string) ([]gate.Approval, error) {
	f, err := statefile.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading approvals: %w", err)
	}
	defer f.Close()
	out, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Log puts a person's approval on the approval log (Path, Open).
func Log(getenv func(string) string, a *gate.Approval) error {
	path, err := Path(getenv)
	if err != nil {
		return err
	}
	f, err := Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	line, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("logging the approval: %w", err)
	}
	return nil
}
