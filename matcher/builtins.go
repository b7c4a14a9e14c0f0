package matcher

import (
	"strings"

	"github.com/agent-shim/agent-shim/shellparse"
)

// harmless reports whether a command no rule matches is a shell builtin
// that runs nothing and writes nothing, so that it does not keep an
// otherwise allowed line from being allowed: true, false, :, exit, return,
// shift, wait, pwd, cd and pushd to a directory known statically, popd,
// dirs, and set with the options that only make the shell stricter (-e,
// -u, -o pipefail).
// set -x is not among them: with xtrace the shell expands PS4 before each
// command, and PS4 may come from the environment.
func harmless(c *call, cmd *shellparse.Command) bool {
	if len(cmd.Args) == 0 || !cmd.Args[0].Static || cmd.Args[0].Text != c.prog || len(cmd.Assigns) > 0 {
		return false
	}
	args := cmd.Args[1:]
	switch c.prog {
	case "true", "false", ":":
		return true
	case "exit", "return", "shift", "wait":
		return len(args) <= 1
	case "pwd":
		for _, a := range args {
			if a.Text != "-L" && a.Text != "-P" {
				return false
			}
		}
		return true
	case "popd", "dirs":
		return len(args) == 0
	case "cd", "pushd":
		if len(args) > 1 && args[0].Text == "--" {
			args = args[1:]
		}
		return len(args) == 0 || len(args) == 1 && args[0].Static && !strings.HasPrefix(args[0].Text, "-") ||
			len(args) == 1 && args[0].Text == "-"
	case "set":
		if len(args) == 0 {
			return false // prints every variable: harmless, but rarely meant
		}
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.Static || len(a.Text) < 2 || a.Text[0] != '-' && a.Text[0] != '+' {
				return false
			}
			for j := 1; j < len(a.Text); j++ {
				switch a.Text[j] {
				case 'e', 'u', 'E', 'T':
				case 'o':
					if j != len(a.Text)-1 || i+1 >= len(args) {
						return false
					}
					i++
					switch args[i].Text {
					case "pipefail", "errexit", "nounset", "errtrace", "functrace", "noclobber":
					default:
						return false
					}
				default:
					return false
				}
			}
		}
		return true
	}
	return false
}
