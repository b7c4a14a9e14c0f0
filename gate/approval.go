package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Approval is one approval: what a person approved, by whom, for which
// command, directory and scope, until when. Session answers (the approval
// log holds one per line), hook tickets and the run-time layer share it;
// a host builds one from the Decision it had approved (Decision.Approval)
// and the run-time layer asks it what it covers (Covers, Keeps).
//
// Everything an approval covers is data, compared exactly: the program
// and argv the line starts, the argv of its commands, and the protected
// paths it writes. Nothing is matched against a reason text.
type Approval struct {
	// Tool and Key are the call approved: the shell tool and its
	// command line, or a file tool and its path.
	Tool string `json:"tool"`
	Key  string `json:"key"`
	// Decision is the person's answer: "once", "session", "tool" or
	// "always" (AnswerOnce.String(), …).
	Decision string    `json:"decision"`
	Time     time.Time `json:"time"`
	Session  string    `json:"session"`
	// By is through what the person answered: ByTerminal, ByAgent; ""
	// in the approval log's older lines.
	By string `json:"by,omitempty"`
	// Dir is the directory the call runs in; "" when any.
	Dir string `json:"cwd,omitempty"`
	// Expires ends the approval; zero when it ends with its use (once)
	// or its session.
	Expires time.Time `json:"expires,omitzero"`
	// Path and Argv are the program the approved call starts and its
	// exact argv (the shell shell mode execs, the program of `agent-shim
	// run`); empty when not known.
	Path string   `json:"path,omitempty"`
	Argv []string `json:"argv,omitempty"`
	// Commands are the commands of an approved line as the gate read
	// them (runners unwrapped; a word not known statically stands for
	// any word).
	Commands [][]shellparse.Word `json:"commands,omitempty"`
	// Writes are the protected paths the approved call writes, absolute
	// and clean, as named and as resolved: what it may change of them.
	Writes []string `json:"writes,omitempty"`
	// Programs are the programs a "tool" answer approves for the session
	// (Request.Programs); empty for a tool approved whole.
	Programs []string `json:"programs,omitempty"`
	// Writable are the paths the approved call writes as the gate read
	// them (redirections, what programs are known to write), absolute
	// and clean, as named and as resolved; Privileged reports that it runs
	// a command through a program that gains privileges (sudo, doas,
	// pkexec, su, run0) by a word of the line. What an approved line may
	// do under the run-time layer beyond any other comes from these two
	// only (package runlayer, supervisor.Grant).
	Writable   []string `json:"writable,omitempty"`
	Privileged bool     `json:"privileged,omitempty"`
}

// Who answered an approval (Approval.By).
const (
	ByTerminal = "terminal" // a prompt on the person's terminal (a Prompter)
	ByAgent    = "agent"    // the agent's own permission prompt (a hook ticket, PostToolUse)
)

// Keeps reports whether the approval covers a change of the protected
// path p (absolute): p is one of the paths it writes, or below one.
func (a *Approval) Keeps(p string) bool {
	if a == nil {
		return false
	}
	p = filepath.Clean(p)
	return slices.ContainsFunc(a.Writes, func(w string) bool { return within(p, w) })
}

// Execution is one program execution the run-time layer decides.
type Execution struct {
	// Path is the file executed as named, made absolute; Real is it
	// with every link resolved ("" when it cannot be).
	Path, Real string
	// Argv is what the program receives, argv[0] included.
	Argv []string
	// Dir is the working directory of the process.
	Dir string
	// Spellings are the argvs the execution may amount to (argv with
	// the program as named, as resolved, as argv[0] says, as the copy
	// of a restricted program it is, …); nil is Argv alone.
	Spellings [][]string
	// Env holds the variables that make the dynamic loader load code the
	// program does not name (LD_PRELOAD=…), when the tree set them.
	Env []string
}

// Covers reports whether the approval covers the execution x whole: the
// program the approved call started, with its exact argv, or an argv
// each of whose commands (as the static reading reads it: runners
// unwrapped, see DecideExecution) is one of the approved line's commands,
// word for word, where the line runs it. A command that merely ends with
// an approved command's words is not one: `git push other HEAD:x git push
// origin feature` is not `git push origin feature`.
func (a *Approval) Covers(x Execution) bool {
	if a == nil {
		return false
	}
	if a.started(x) {
		return true
	}
	cmds, err := execCommands(x.Argv, x.Dir)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for i, cmd := range cmds {
		if !a.coversCommand(cmd, i == 0 && len(cmd.Nesting) == 0, x) {
			return false
		}
	}
	return true
}

// started reports whether x is the program the approved call started,
// with its exact argv.
func (a *Approval) started(x Execution) bool {
	return a != nil && a.Path != "" && x.Path == a.Path && slices.Equal(x.Argv, a.Argv)
}

// coversCommand reports whether cmd, one command of the reading of the
// execution x, is one of the approved line's commands. own says cmd is
// the execution's own program, not one it runs: its program must then be
// the file really executed, not only what argv[0] says.
func (a *Approval) coversCommand(cmd *shellparse.Command, own bool, x Execution) bool {
	if a == nil {
		return false
	}
	for _, words := range a.Commands {
		if wordsMatch(words, cmd.Args, own, x) {
			return true
		}
	}
	return false
}

// wordsMatch reports whether args (a command of an execution's reading)
// are the approved command words, whole: the program compared by base
// name (for the execution's own program, the file executed must have it
// too), a word not known statically in the approval standing for any word
// (and one that may split, for any number of words from there on), and a
// word of args not known statically matching only such a word.
func wordsMatch(words, args []shellparse.Word, own bool, x Execution) bool {
	for i, w := range words {
		if !w.Static && w.Split {
			return true // any number of words from here on
		}
		if i == len(args) {
			return false
		}
		switch {
		case !w.Static:
		case !args[i].Static:
			return false
		case i == 0:
			b := filepath.Base(w.Text)
			if filepath.Base(args[0].Text) != b {
				return false
			}
			if own && x.Path != "" && filepath.Base(x.Path) != b && filepath.Base(x.Real) != b {
				return false
			}
		case w.Text != args[i].Text:
			return false
		}
	}
	return len(words) == len(args)
}

// Approve returns the approval of d that a person gave: answer, through
// by, at now, for the call's directory dir. It holds what approving d
// covers (Decision.Covers); nil when d has nothing to approve, and for a
// Deny: no approval lifts a deny (an ask ticket of the hook, an answer
// given elsewhere).
func (d Decision) Approve(answer Answer, by, dir string, now time.Time) *Approval {
	if d.Covers == nil || d.Verdict == Deny {
		return nil
	}
	a := *d.Covers
	a.Decision, a.By, a.Dir, a.Time = answer.String(), by, dir, now.UTC()
	return &a
}

// DecideExecution decides one execution seen under the run-time layer,
// by every argv it may amount to; the strictest wins. Each argv is read as
// the static reading reads a line that is exactly that argv: a runner's
// command (env, sudo, xargs, sh -c, tmux new-window …) is decided as the
// runner's own execution is, exactly as statically, so that the static
// and the run-time readings of one argv are one reading.
//
// ap is what a person approved of the line that started the tree (nil:
// nothing): it counts for the line's own commands only, each where the
// line runs it (see Covers), so an approved `git commit` does not approve
// the `git push` a planted hook runs. refusal is why the execution must
// fail, in one line for the person; "" lets it run (Allow, or Default:
// checked as it runs). An execution that loads code through the loader's
// variables needs an approval.
func (g *Gate) DecideExecution(x Execution, ap *Approval) (d Decision, refusal string) {
	if len(x.Env) > 0 && !ap.Covers(x) {
		reason := "runs with " + strings.Join(x.Env, " ") + ", which loads code the program does not name"
		return Decision{Verdict: Ask, Reason: reason}, reason + ", and nobody approved it"
	}
	spellings := x.Spellings
	if spellings == nil {
		spellings = [][]string{x.Argv}
	}
	whole := ap.started(x)
	for i, argv := range spellings {
		di := g.decideExec(argv, x.Dir, func(cmd *shellparse.Command, own bool) bool {
			return whole || ap.coversCommand(cmd, own, x)
		})
		switch di.Verdict {
		case Deny:
			return di, di.Reason
		case Ask:
			if ap != nil {
				return di, di.Reason + ", and the approval of the line covers its own commands only"
			}
			return di, di.Reason + ", and nobody approved the line that runs it"
		}
		if i == 0 || Stronger(di.Verdict, d.Verdict) {
			d = di
		}
	}
	return d, ""
}

// Redecide decides a decision log entry again, with the function that
// decided it: a hook's or an embedder's call as Decide does, a shell-mode
// line as DecideLine (as its shell reads it), a run-time execution as DecideExecution (nothing
// approved). ok is false for an entry that cannot be replayed: not a
// shell command, cut short in the log (Entry.Cut), or decided by a
// person's earlier answer rather than the policy alone (Entry.Approved).
func (g *Gate) Redecide(e decisionlog.Entry) (d Decision, ok bool) {
	switch {
	case e.Cut || e.Approved:
		return Decision{}, false
	case e.Layer == decisionlog.LayerRuntime:
		if len(e.Argv) == 0 {
			return Decision{}, false // the undoing of a protected path
		}
		d, _ := g.DecideExecution(Execution{Argv: e.Argv, Dir: e.Cwd}, nil)
		return d, true
	case e.Layer == decisionlog.LayerShell:
		// The line as the shell that ran it reads it (already taken out
		// of any agent's wrapper).
		_, d := g.decideIn(e.Command, e.Shell)
		return d, e.Command != ""
	}
	return g.Decide(e.Tool, e.Command), e.Command != "" && IsCommandTool(e.Tool)
}

// gitDirOf returns the repository configuration a `git config` run in
// dir writes: .git/config of the nearest directory at or above dir that
// has a .git; dir/.git/config when none has.
func gitConfigOf(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return filepath.Join(d, gitConfigFile)
		}
		if d == filepath.Dir(d) {
			return filepath.Join(dir, gitConfigFile)
		}
	}
}
