// Package matcher decides whether the commands of a shell command line may
// run, under a policy of rules.
//
// A rule is a human-readable command line from a permission manifest
// (`git push --force`), matched semantically: program basename, leading
// subcommand words, flags as sets with each program's aliases (`-rf` =
// `-r -f` = `--recursive --force`), and operands compared as cleaned paths.
// A rule may also be one of the agent's own grant strings:
// `command(regex:RE)`, `command(prefix words)` or `command(*)`.
//
// Each command the line would execute (see package shellparse) is decided
// Deny, then Ask, then Allow, else Default, and the line takes the strongest
// verdict: any Deny, else any Ask, else any Default, else Allow. Built-in
// floors make a verdict at least Ask whatever the rules say: a line that does
// not parse, a program or subcommand that is not statically known, a script
// nobody can read, a write to a file, an environment assignment that changes
// what runs, and a git option that injects a command. Allow needs a program
// found on PATH or in a system directory.
//
// What the matcher knows about particular programs comes from package
// programs' table: which options take a value (git checkout -bNAME is not a
// flag cluster), which spellings are one flag, which options run a command
// line (decided as a script of its own: a deny inside is a deny; anything
// else is at least Ask), run a program (at least Ask) or write (an allow
// rule allows it only when it names the option: `sed -i`). Verdict.Fact
// names the fact that made a verdict stricter. Harmless shell builtins
// (true, exit, set -e, cd DIR) do not keep a line from being allowed.
package matcher

import "fmt"

// Decision is the verdict for a command or a line.
type Decision int

const (
	// Default means no rule matched: the agent's normal prompt applies.
	Default Decision = iota
	// Allow runs the command unattended.
	Allow
	// Ask needs a person's approval.
	Ask
	// Deny never runs the command.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Default:
		return "default"
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// ParseDecision parses "allow", "ask", "deny" or "default".
func ParseDecision(s string) (Decision, error) {
	switch s {
	case "default":
		return Default, nil
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return Default, fmt.Errorf("unknown decision %q", s)
}

// rank orders decisions by strength: Allow < Default < Ask < Deny.
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 0
	case Default:
		return 1
	case Ask:
		return 2
	}
	return 3 // Deny, and anything unknown fails closed
}

// Combine returns the stronger of two decisions: any Deny, else any Ask,
// else any Default, else Allow.
func Combine(a, b Decision) Decision {
	if b.rank() > a.rank() {
		return b
	}
	return a
}
