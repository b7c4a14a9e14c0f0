// Package shellmode is what agent-shim does as the agent's shell
// (`agent-shim -c '<line>'`): it reads a shell's argv by hand (never a CLI
// framework's way) for the -c command line, finds the real shell, has the
// gate decide the line as that shell reads it (gate.DecideLine), takes the
// hook's ticket, asks the person on the terminal when the line needs it,
// and runs the real shell through the run-time layer (package runlayer);
// `agent-shim run` is the same without the line.
package shellmode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agent-shim/agent-shim/internal/runlayer"
)

// DefaultShell is the real shell when nothing names one.
const DefaultShell = "/bin/bash"

// IsArgv reports whether the first argument is a shell option: the
// shim was started as the agent's shell.
func IsArgv(a string) bool {
	switch a {
	case "-h", "-help", "--help", "--version":
		return false
	}
	return len(a) > 1 && (a[0] == '-' || a[0] == '+')
}

// shellLongFlags are bash's long options without an argument.
var shellLongFlags = map[string]bool{
	"--login": true, "--noprofile": true, "--norc": true, "--posix": true, "--restricted": true,
	"--verbose": true, "--noediting": true, "--debugger": true, "--pretty-print": true,
}

// Command reads a shell's argv by hand: options (`-c`, clusters
// such as `-lc` and `-ec`, `-o NAME`, `+o NAME`, `-O NAME`, bash's long
// options), then, with -c, the command line, then $0 and the positional
// parameters, which the real shell gets unchanged.
func Command(args []string) (string, error) {
	hasC := false
	i := 1
options:
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			break options
		case strings.HasPrefix(a, "--"):
			switch {
			case shellLongFlags[a]:
			case a == "--rcfile" || a == "--init-file":
				if i+1 == len(args) {
					return "", fmt.Errorf("%s needs a file", a)
				}
				i++
			default:
				return "", fmt.Errorf("unknown shell option %s", a)
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					hasC = true
				case c == 'o' || c == 'O':
					if i+1 == len(args) {
						return "", fmt.Errorf("%c%c needs an option name", a[0], c)
					}
					i++
				case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				default:
					return "", fmt.Errorf("unknown shell option %s", a)
				}
			}
		default:
			break options
		}
	}
	if !hasC {
		return "", errors.New("shell mode runs only command lines given with -c (no scripts, no stdin, no interactive shell)")
	}
	if i == len(args) {
		return "", errors.New("-c needs a command line")
	}
	return args[i], nil
}

// Find returns the real shell to exec: name (from names where it came
// from, for messages), else DefaultShell, found on PATH when it is a bare
// name. It refuses this program itself (self), by any name or link, which
// would decide and exec itself forever.
func Find(name, from string, self func() (string, error)) (string, error) {
	if name == "" {
		name, from = DefaultShell, "the default shell"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("finding the real shell (%s): %w", from, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", fmt.Errorf("finding the real shell (%s): %w", from, err)
	}
	me, err := self()
	if err != nil {
		return "", fmt.Errorf("finding agent-shim itself, to tell it from the real shell: %w", err)
	}
	if SameFile(path, me) {
		return "", &runlayer.Hinted{Err: fmt.Errorf("the real shell %s (%s) is agent-shim itself", path, from),
			Hint: "set AGENT_SHIM_SHELL or agentShim.shell to the real shell, such as /bin/bash"}
	}
	return path, nil
}

// Argv is the real shell's argv for the shim's own args: the shell's
// name, then the shim's arguments unchanged; a login shell (argv[0]
// starting with -, as login(1) starts it) stays one.
func Argv(shell string, args []string) []string {
	argv := append([]string{filepath.Base(shell)}, args[1:]...)
	if strings.HasPrefix(args[0], "-") || strings.HasPrefix(filepath.Base(args[0]), "-") {
		argv[0] = "-" + argv[0]
	}
	return argv
}

// SameFile reports whether a and b are one file, through links of any
// kind. When it cannot tell, it says they are.
func SameFile(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return true
	}
	if ra == rb {
		return true
	}
	fa, err1 := os.Stat(ra)
	fb, err2 := os.Stat(rb)
	if err1 != nil || err2 != nil {
		return true
	}
	return os.SameFile(fa, fb)
}
