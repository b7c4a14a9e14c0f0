package matcher

import (
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// What the matcher knows about running programs in general. What it knows
// about particular programs is in package programs' table.

// systemDirs are the directories a program may be run from by path and
// still be trusted to be the program its name says.
var systemDirs = map[string]bool{
	"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true,
	"/usr/lib/git-core": true, "/usr/libexec/git-core": true,
	"/opt/homebrew/bin": true, "/run/current-system/sw/bin": true,
}

// privileged runners run the command as another user: never unattended.
var privileged = map[string]bool{"sudo": true, "doas": true, "su -c": true, "runuser -c": true, "runuser": true}

// safeEnv lists environment variables that only change formatting, locale
// or identity, never what runs. Any other variable set on a command keeps it
// from being allowed (PATH, LD_PRELOAD, GIT_EXTERNAL_DIFF, GOFLAGS, …).
var safeEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLORTERM": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"COLUMNS": true, "LINES": true, "CI": true,
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true, "GIT_ADVICE": true, "GIT_FLUSH": true,
	"GOOS": true, "GOARCH": true, "GOARM": true, "GOAMD64": true, "CGO_ENABLED": true,
	"GOMAXPROCS": true, "GOGC": true, "GOMEMLIMIT": true, "GOTRACEBACK": true,
	"GOPRIVATE": true, "GONOSUMDB": true, "GONOPROXY": true,
	"RUST_BACKTRACE": true, "RUST_LOG": true, "RUST_LOG_STYLE": true, "CARGO_TERM_COLOR": true,
	"NODE_ENV": true, "PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
	"PYTHONHASHSEED": true, "PYTHONIOENCODING": true,
}

// runsEnv reports a variable of programs.RunEnv.
func runsEnv(name string) bool { return programs.RunsEnv(name) }

// harmlessPagers are values of PAGER-like variables that run nothing new.
var harmlessPagers = map[string]bool{"": true, "cat": true, "less": true, "more": true}

func envSafe(name, value string, static bool) bool {
	if safeEnv[name] || strings.HasPrefix(name, "LC_") {
		return true
	}
	switch name {
	case "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER":
		return static && harmlessPagers[value]
	}
	return false
}
