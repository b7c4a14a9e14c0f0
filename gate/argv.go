package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// execCommands reads the argv of one execution as the static reading
// reads a line that is exactly that argv, every word quoted (package
// shellparse): the program and, for a runner or a shell, the commands it
// runs, each in the working directory dir (or where a cd of a nested
// script moves). The run-time layer and the static reading of one argv are
// thus one reading.
func execCommands(argv []string, dir string) ([]*shellparse.Command, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("runs a program with no name")
	}
	line, err := QuoteArgv(argv)
	if err != nil {
		return nil, err
	}
	s, err := shellparse.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("reading its argv: %v", err)
	}
	for _, c := range s.Commands {
		switch {
		case c.DirUnknown:
		case c.Dir == "":
			c.Dir = dir
		case !filepath.IsAbs(c.Dir) && !strings.HasPrefix(c.Dir, "~") && dir != "":
			c.Dir = filepath.Join(dir, c.Dir)
		}
	}
	return s.Commands, nil
}

// handOffs are programs that hand what they run to a server outside the
// process tree, which the run-time layer does not see: tmux, screen and
// systemd run it as the person, at and batch have atd run it later, the
// container engines run it as their daemon does, the service managers
// start what they manage outside the tree, and the database clients change
// what their server holds. The
// supervisor lets such a program reach its server because its execution
// was decided (internal/supervisor's control sockets), so a command of
// theirs, and every command they run, is decided at run time exactly as
// statically: nothing in it is left to be checked as it runs.
var handOffs = map[string]bool{
	"tmux": true, "screen": true, "at": true, "batch": true, "systemd-run": true,
	"systemctl": true, "busctl": true, "service": true, "launchctl": true, "supervisorctl": true,
	"pm2": true, "docker": true, "podman": true, "nerdctl": true, "ctr": true, "docker-compose": true,
	"psql": true, "mysql": true, "mariadb": true, "mongosh": true, "mongo": true, "redis-cli": true,
	"sqlcmd": true, "cqlsh": true, "clickhouse-client": true,
}

// handedOff reports whether cmd is run by, or is, a program that hands
// what it runs to a server outside the tree (handOffs).
func handedOff(cmd *shellparse.Command) bool {
	if handOffs[cmd.Name()] {
		return true
	}
	for _, f := range cmd.Nesting {
		if handOffs[filepath.Base(f.Kind)] {
			return true
		}
	}
	return false
}

// decideExec decides one program execution seen at run time (package
// supervisor): argv is exactly what the program receives, argv[0] the
// program as named or executed, dir the process's working directory. The
// argv is read as the static reading reads it (execCommands), and each of
// its commands decided as the gate decides a command of a line under the
// run-time layer; the strictest wins. approved reports whether a person
// approved a command of it (own: the execution's own program; see
// Approval.Covers).
//
// Under the layer what a static reading cannot see into (a program run by
// path, a script, inline code, an option that names a program, a write)
// limits nothing: what the command writes is confined and what it runs is
// decided as it runs, so such a command is Default ("checked as it runs").
// But for a command that hands what it runs to a server outside the tree
// (handOffs), where nothing is seen as it runs: it is decided exactly as
// statically. Deny (a deny rule, the never-allow list, a tool deny
// pattern) and Ask (an ask rule, a deny rule that may match, a rule that
// cannot be read, a protected path, not approved) mean the execution must
// fail; Allow and Default mean it may go on.
func (g *Gate) decideExec(argv []string, dir string, approved func(cmd *shellparse.Command, own bool) bool) Decision {
	cmds, err := execCommands(argv, dir)
	if err != nil {
		return Decision{Verdict: Deny, Reason: err.Error()}
	}
	var ls lineState
	d := Decision{Verdict: Allow, Reason: "runs nothing"}
	for i, cmd := range cmds {
		own := i == 0 && len(cmd.Nesting) == 0
		cv := g.decideCommand(bashTool, cmd, approved(cmd, own), &ls, reading{layer: true, exec: true})
		if !own && maybeDeny(cv) && !handedOff(cmd) {
			// A command the execution runs (xargs' with the words it
			// reads, sh -c's with its variables) that a deny rule may
			// match for a word not known yet: it is decided with all
			// its words when it executes; here by the words known.
			known := *cmd
			known.Args = slices.DeleteFunc(slices.Clone(cmd.Args), func(w shellparse.Word) bool { return !w.Static })
			var kls lineState
			if len(known.Args) > 0 {
				cv = g.decideCommand(bashTool, &known, approved(cmd, own), &kls, reading{layer: true, exec: true})
			}
			if len(known.Args) == 0 || maybeDeny(cv) {
				cv.Verdict, cv.Decider = Default, nil
			}
			cv.Layered = true
		}
		if cv.Layered && (cv.Verdict == Allow || cv.Verdict == Default) {
			cv.Reason += "; " + CheckedAsItRuns
		}
		if i == 0 || Stronger(cv.Verdict, d.Verdict) {
			d = Decision{Verdict: cv.Verdict, Reason: cv.Reason, Rule: cv.Decider, Floor: cv.Floor,
				Approved: cv.approved, BySession: cv.bySession, Layered: cv.Layered}
			if len(cmds) > 1 && len(cv.Argv) > 0 {
				d.Reason = strings.Join(cv.Argv, " ") + ": " + cv.Reason
			}
		}
	}
	return d
}

// maybeDeny reports whether ce asks because a deny rule (or the
// never-allow list) may match it for a word or a directory not known
// statically.
func maybeDeny(ce CommandExplanation) bool {
	return ce.Verdict == Ask && ce.Rule != nil && ce.Rule.Decision == matcher.Deny && ce.Matcher == matcher.Ask
}

// codeOnly reports whether cmd, which no rule decides, runs code the
// static reading cannot see into and nothing else it shows: a program of
// the checkout, of the temporary directory or one an earlier command of
// the line wrote, run by its path; a shell or interpreter running such a
// script (python3 x.py, bash build.sh), or inline code (python3 -c, node
// -e: a fact of the program table). Under the layer each execution such
// code makes is decided as it happens and its writes are confined; network
// is not, so code that shows it (a floor the engine puts on it) is asked,
// never left to the layer. A known program run by its path elsewhere
// (/usr/local/bin/gh) is not code of the line's: its name is what the
// static reading knows of it.
func (g *Gate) codeOnly(cmd *shellparse.Command, mv matcher.Verdict) bool {
	if len(cmd.Args) == 0 || !cmd.Args[0].Static || cmd.Decl != "" {
		return false
	}
	prog := cmd.Args[0].Text
	if strings.Contains(prog, "/") {
		return g.ownFile(cmd, prog)
	}
	if !shellparse.RunsFile(prog) {
		return false
	}
	var inline []string
	if p := g.programs.Program(prog); p != nil {
		for _, f := range p.Root.Facts() {
			if f.Kind == programs.Inline {
				inline = append(inline, f.Args...)
			}
		}
	}
	for i, a := range cmd.Args[1:] {
		switch {
		case !a.Static:
			return false
		case slices.Contains(inline, a.Text):
			// The code is the option's value, the next word; the
			// network it shows the engine reads (a floor), and the
			// layer does not confine.
			return i+2 < len(cmd.Args) && cmd.Args[i+2].Static
		case a.Text == "-m":
			return false // a module, found where the interpreter looks
		case strings.HasPrefix(a.Text, "-"):
			continue // an option: python3 -u x.py
		}
		return g.ownFile(cmd, a.Text)
	}
	return false
}

// ownFile reports whether the file p that cmd runs is one an earlier
// command of the line wrote, or a regular file of the checkout (in the
// scope) or of the temporary directory (where the tree writes under the
// layer).
func (g *Gate) ownFile(cmd *shellparse.Command, p string) bool {
	a := g.absIn(cmd.Dir, p)
	if a == "" {
		return false
	}
	if slices.Contains(cmd.Written, filepath.Clean(p)) || slices.Contains(cmd.Written, filepath.Clean(a)) {
		return true
	}
	real, ok := g.scope.resolve(a)
	if !ok || !g.scope.containsResolved(real) && !inTempDir(real) {
		return false
	}
	fi, err := os.Stat(real)
	return err == nil && fi.Mode().IsRegular()
}

// codeWhat names the code cmd runs, for the reason (see codeOnly).
func codeWhat(cmd *shellparse.Command) string {
	if len(cmd.Args) > 1 && !strings.Contains(cmd.Args[0].Text, "/") {
		if strings.HasPrefix(cmd.Args[1].Text, "-") {
			return cmd.Name() + " " + cmd.Args[1].Text + " code"
		}
		return cmd.Args[1].Text
	}
	return cmd.Args[0].Text
}
