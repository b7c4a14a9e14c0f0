package gate

import (
	"strings"

	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// decideExec decides one program execution seen at run time (package
// supervisor): argv is exactly what the program receives, argv[0] the
// program as named or executed, dir the process's working directory.
// Nothing is parsed: the words are static, and runners and nested shells
// are not unwrapped, because what they run is an execution of its own,
// decided when it happens. approved reports that a person approved the
// line that started the process tree.
//
// The verdict is the gate's per-command decision, with one difference: a
// floor that only says what a static reading cannot know (a program run by
// path, a write a command makes, inline code, an option that names a
// program) is not an Ask here. At run time what the command writes is
// confined and what it runs is decided as it runs, so such a command is
// Default. Deny (a deny rule, the never-allow list, a tool deny pattern)
// and Ask (an ask rule or a deny rule that may match, not approved) mean
// the execution must fail; Allow and Default mean it may go on.
func (g *Gate) decideExec(argv []string, dir string, approved bool) Decision {
	if len(argv) == 0 || argv[0] == "" {
		return Decision{Verdict: Deny, Reason: "runs a program with no name"}
	}
	words := make([]shellparse.Word, len(argv))
	for i, a := range argv {
		words[i] = shellparse.Word{Text: a, Static: true}
	}
	cmd := &shellparse.Command{Args: words, Dir: dir, Source: strings.Join(argv, " ")}
	cv := g.decideCommand(bashTool, cmd, approved, &lineState{})
	// A write to a protected path is asked at run time too: the
	// confinement of writes to the scope does not keep them out of
	// .git/config or the manifests, which lie inside it.
	if cv.Verdict == Ask && cv.Protected == "" && !g.askedByRule(cmd) {
		return Decision{Verdict: Default, Reason: cv.Reason + "; checked as it runs"}
	}
	return Decision{Verdict: cv.Verdict, Reason: cv.Reason, Rule: cv.Decider, Floor: cv.Floor, Approved: cv.approved, BySession: cv.bySession}
}

// askedByRule reports whether cmd is Ask because of a rule: an ask rule, a
// deny rule that may match, or a rule that cannot be read (fail closed);
// or because it reaches other machines, which the run-time layer does not
// confine. Otherwise the Ask comes from floors a static reading puts on a
// command.
func (g *Gate) askedByRule(cmd *shellparse.Command) bool {
	mv := g.policy.DecideCommand(cmd)
	if mv.Decision != matcher.Ask {
		// decideCommand asked for a reason of its own (an unreadable
		// command in yolo mode, …): keep it.
		return true
	}
	if mv.Rule != nil && mv.Rule.Decision != matcher.Allow {
		return true
	}
	// What reaches other machines is not confined at run time either.
	return mv.Unreadable || mv.Network != ""
}
