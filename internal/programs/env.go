package programs

import "strings"

// runEnvWords and runEnvPrefixes are the environment variables that change
// what any program runs or loads: the search path (and zsh's path), the
// dynamic loader, bash's startup and function import (BASH_ENV, ENV,
// BASH_FUNC_*, SHELLOPTS), the home and configuration directories (where
// programs read configuration that runs commands), the pager and editor
// programs run, glibc's loadable modules. Prefixes rather than names keep
// the allow grants that spell the list short (PATHX is refused too). A
// variable set in front of a command that is neither one of these nor one
// the program table says the program runs by (env-exec, env-runs) changes
// nothing that runs: FOO=bar git status is git status. Package manifest spells the
// same list into allow grants, package matcher decides with it.
var (
	runEnvWords    = []string{"ENV"}
	runEnvPrefixes = []string{"PATH", "HOME", "IFS", "PS4", "SHELL", "BASH", "PAGER", "EDITOR", "VISUAL",
		"LD_", "DYLD", "XDG", "GCONV", "GLIBC", "LOCPATH", "path", "LESS"}
)

// execEnvNames are the variables whose value is a command line that
// programs in general run, whichever program the line sets them for:
// the pager and the editor (git, man, psql, systemctl, crontab -e, …),
// less's input and output filters, git's ssh, fzf's file lister. LESS
// holds less's options, among them +!CMD (see package matcher). Set on a
// line, such a value is decided as the command it is.
var execEnvNames = []string{"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "BAT_PAGER", "DELTA_PAGER",
	"PSQL_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "SYSTEMD_EDITOR",
	"FCEDIT", "LESSOPEN", "LESSCLOSE", "GIT_SSH_COMMAND", "FZF_DEFAULT_COMMAND"}

// ExecEnv reports a variable of execEnvNames.
func ExecEnv(name string) bool {
	for _, n := range execEnvNames {
		if n == name {
			return true
		}
	}
	return false
}

// RunEnv returns the variables that change what any program runs: names,
// and prefixes of names (a copy).
func RunEnv() (words, prefixes []string) {
	return append([]string(nil), runEnvWords...), append([]string(nil), runEnvPrefixes...)
}

// RunsEnv reports a variable of RunEnv.
func RunsEnv(name string) bool {
	for _, w := range runEnvWords {
		if name == w {
			return true
		}
	}
	for _, p := range runEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
