package runlayer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/supervisor"
)

// maxRefusalHints bounds the things a failed line's hints name, per kind.
const maxRefusalHints = 3

// reportRefusals says, for a line that failed, what the run-time layer
// refused it that it saw itself (supervisor.Status.Refused: executions,
// connections, metadata calls), one hint per kind, naming what was
// refused and the config key that would allow it; each refusal was
// reported as it happened, with its reason.
func (r *Run) reportRefusals(rs []supervisor.Refusal) {
	byKind := map[string][]string{}
	var kinds []string
	scope := ""
	seen := map[string]bool{}
	for _, x := range rs {
		var what string
		switch x.Kind {
		case "exec":
			what = ArgvString(x.Argv)
			if len(x.Argv) == 0 {
				what = x.Path
			}
		case "metadata":
			what = x.Call + " " + x.Path
			if x.Scope && scope == "" {
				scope = x.Path
			}
		case "connect":
			what = x.Path + " (" + x.Reason + ")"
		default:
			what = x.Reason
		}
		if seen[x.Kind+"\x00"+what] {
			continue
		}
		seen[x.Kind+"\x00"+what] = true
		if _, ok := byKind[x.Kind]; !ok {
			kinds = append(kinds, x.Kind)
		}
		byKind[x.Kind] = append(byKind[x.Kind], oneLine(what))
	}
	list := func(l []string) string {
		if len(l) > maxRefusalHints {
			return strings.Join(l[:maxRefusalHints], "; ") + fmt.Sprintf("; and %d more", len(l)-maxRefusalHints)
		}
		return strings.Join(l, "; ")
	}
	for _, k := range kinds {
		l := byKind[k]
		switch k {
		case "exec":
			fmt.Fprintf(r.Stderr, "agent-shim: hint: the line failed after the run-time layer refused to run: %s; the rule that refused each is named above: to allow one, add a grant for it to userSettings.globalPermissionGrants.allow in %s (what is never allowed stays refused), or run it yourself\n", list(l), r.Config)
		case "metadata":
			fmt.Fprintf(r.Stderr, "agent-shim: hint: the line failed after the run-time layer refused to change a file's mode, owner, times or flags outside what a line may write: %s", list(l))
			if scope != "" {
				fmt.Fprintf(r.Stderr, "; to let lines change it, add %s (or %s/...) to agentShim.pathScope.allow in %s", scope, filepath.Dir(scope), r.Config)
			}
			fmt.Fprintln(r.Stderr)
		case "connect":
			fmt.Fprintf(r.Stderr, "agent-shim: hint: the line failed after the run-time layer refused a connection to a server that runs what it is told outside the layer: %s; no setting allows it under the layer: run that command yourself\n", list(l))
		default:
			fmt.Fprintf(r.Stderr, "agent-shim: hint: the line failed after the run-time layer refused what it could not read: %s\n", list(l))
		}
	}
}

// reportProtected says which protected paths of its checkouts the line
// tried to write, read-only for it under the layer
// (supervisor.Status.Prevented): the tree's messages named them with a
// read-only file system (words, relative to the working directory or
// absolute); one line each on stderr and in the decision log, as an undo
// is said. It reports whether it said any.
func (r *Run) reportProtected(snap *supervisor.Snapshot, words []string) bool {
	wd, _ := os.Getwd()
	var said []string
	for _, w := range words {
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		p = filepath.Clean(p)
		if slices.Contains(said, p) || !snap.Protects(p) {
			continue
		}
		said = append(said, p)
		how := "a person's approval of the line lets it"
		if r.Agent == "run" {
			how = "it acts later as you: change it yourself, outside agent-shim run"
		}
		fmt.Fprintf(r.Stderr, "agent-shim: denied at run time: the line may not write %s, a protected path: read-only under the run-time layer (%s)\n", p, how)
		if r.Log != nil {
			r.Log.Log(gate.Decision{Verdict: gate.Deny, Reason: "a protected path is read-only at run time"}.Record(decisionlog.Entry{
				Time: r.Now(), Agent: r.Agent, Layer: decisionlog.LayerRuntime, Tool: "write", Command: p,
			}))
		}
	}
	return len(said) > 0
}
