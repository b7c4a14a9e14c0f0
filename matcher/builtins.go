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
// -u, -o pipefail); test and [ (which compare and look at files, and
// evaluate nothing: only -v NAME[SUBSCRIPT] would), and read into plain
// lower-case names (IFS= read -r line).
// set -x is not among them: with xtrace the shell expands PS4 before each
// command, and PS4 may come from the environment.
func harmless(c *call, cmd *shellparse.Command) bool {
	if len(cmd.Args) == 0 || !cmd.Args[0].Static || cmd.Args[0].Text != c.prog {
		return false
	}
	for _, a := range cmd.Assigns {
		if c.prog != "read" || a.Name != "IFS" {
			return false
		}
	}
	args := cmd.Args[1:]
	switch c.prog {
	case "[", "test":
		for i, a := range args {
			if a.Text == "-v" && (i+1 >= len(args) || !args[i+1].Static || !shellName(args[i+1].Text)) {
				return false // -v a[$(cmd)] evaluates the subscript
			}
		}
		return true
	case "read":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.Static {
				return false
			}
			if strings.HasPrefix(a.Text, "-") && len(a.Text) > 1 {
				opt := a.Text[1:]
				for j := 0; j < len(opt); j++ {
					switch opt[j] {
					case 'r', 's', 'e':
						continue
					case 'a', 'd', 'i', 'n', 'N', 'p', 't', 'u':
						if j == len(opt)-1 {
							i++ // the value is the next word
							if opt[j] == 'a' && (i >= len(args) || !readName(args[i])) {
								return false
							}
						} else if opt[j] == 'a' && !readName(shellparse.Word{Text: opt[j+1:], Static: true}) {
							return false
						}
					default:
						return false
					}
					break
				}
				continue
			}
			if !readName(a) {
				return false
			}
		}
		return true
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

// shellName reports a plain variable name.
func shellName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// readName reports a name read may assign without changing what later
// commands run: a plain name with a lower-case letter (PATH, IFS, BASH_ENV
// are upper case) that is not one of zsh's arrays tied to a search path.
func readName(w shellparse.Word) bool {
	if !w.Static || !shellName(w.Text) || !hasLower(w.Text) {
		return false
	}
	switch w.Text {
	case "path", "cdpath", "fpath", "module_path", "manpath", "mailpath":
		return false
	}
	return true
}
