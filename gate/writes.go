package gate

import (
	"path"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// writeTargets returns the paths a command (its argv as the rules see
// it: program basename, runners unwrapped) writes through its operands
// and options, and whether some target cannot be told: the knowledge
// table's (Table.WriteTargets), and `git config`'s writes.
func writeTargets(tbl *programs.Table, argv []string) (paths []string, unknown bool) {
	paths, unknown = tbl.WriteTargets(argv)
	if len(argv) > 0 && path.Base(argv[0]) == "git" {
		p, u := gitWrites(argv[1:])
		paths, unknown = append(paths, p...), unknown || u
	}
	return paths, unknown
}

// operands splits args into operands and options; after `--` all are
// operands.
func operands(args []string) (ops, opts []string) {
	for i, a := range args {
		if a == "--" {
			return append(ops, args[i+1:]...), opts
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			opts = append(opts, a)
			if i+1 < len(args) && (a == "-t" || a == "--target-directory" || a == "-o" || a == "--output" || a == "-O" || a == "--output-document" || a == "-f" || a == "--file") {
				opts = append(opts, args[i+1])
			}
			continue
		}
		if i > 0 && slices.Contains([]string{"-t", "--target-directory", "-o", "--output", "-O", "--output-document", "-f", "--file"}, args[i-1]) {
			continue
		}
		ops = append(ops, a)
	}
	return ops, opts
}

// optValue returns the value of a short or long option in opts (as
// operands leaves them: `-t DIR`, `-tDIR`, `--target-directory=DIR`).
func optValue(opts []string, short, long string) (string, bool) {
	for i, o := range opts {
		switch {
		case o == short || long != "" && o == long:
			if i+1 < len(opts) {
				return opts[i+1], true
			}
			return "", true
		case long != "" && strings.HasPrefix(o, long+"="):
			return o[len(long)+1:], true
		case len(short) == 2 && strings.HasPrefix(o, short) && len(o) > 2 && !strings.HasPrefix(o, "--"):
			return o[2:], true
		}
	}
	return "", false
}

// gitConfigFile is the target that stands for a `git config` write to a
// repository's configuration, wherever the repository is: it is
// protected as every .git/config is.
const gitConfigFile = ".git/config"

// gitWrites returns what a git command writes that the gate protects:
// `git config` setting, unsetting or editing a key writes the repository's
// .git/config, ~/.gitconfig (--global), /etc/gitconfig (--system) or the
// --file given. Reading a key (`git config k`, --get, --list) writes
// nothing; neither does `git -c k=v`.
func gitWrites(args []string) ([]string, bool) {
	if len(args) == 0 || args[0] != "config" {
		return nil, false
	}
	ops, opts := operands(args[1:])
	write := len(ops) >= 2
	if len(ops) > 0 {
		switch ops[0] {
		case "set", "unset", "rename-section", "remove-section", "edit":
			write = true
		case "get", "list":
			write = false
		}
	}
	for _, o := range opts {
		switch {
		case o == "-e" || o == "--edit" || o == "--add" || o == "--replace-all" || strings.HasPrefix(o, "--unset") ||
			o == "--rename-section" || o == "--remove-section":
			write = true
		case o == "--get" || strings.HasPrefix(o, "--get-") || o == "-l" || o == "--list":
			write = false
		}
	}
	if !write {
		return nil, false
	}
	if f, ok := optValue(opts, "-f", "--file"); ok {
		return []string{f}, f == ""
	}
	switch {
	case slices.Contains(opts, "--global"):
		return []string{"~/.gitconfig"}, false
	case slices.Contains(opts, "--system"):
		return []string{"/etc/gitconfig"}, false
	}
	return []string{gitConfigFile}, false
}
