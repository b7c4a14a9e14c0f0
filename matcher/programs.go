package matcher

import "strings"

// What the matcher knows about particular programs. Everything here makes a
// decision stricter or more precise; a program missing from these tables is
// matched generically (every short option is one flag, long options by name).

// flagNames maps a program, or "git <subcommand>", to the canonical names of
// its flags, so that aliases compare equal: rm -r = -R = --recursive. A flag
// may stand for several (git branch -D = --delete --force).
var flagNames = map[string]map[string][]string{
	"rm": names(
		"recursive: r R recursive",
		"force: f force",
		"interactive: i I interactive",
		"dir: d dir",
		"verbose: v verbose",
		"no-preserve-root: no-preserve-root",
		"one-file-system: one-file-system",
	),
	"cp": names("recursive: r R recursive", "force: f force", "archive: a archive",
		"no-clobber: n no-clobber"),
	"mv":    names("force: f force", "no-clobber: n no-clobber", "interactive: i interactive"),
	"chmod": names("recursive: R recursive"),
	"chown": names("recursive: R recursive"),
	"chgrp": names("recursive: R recursive"),
	"sed": names(
		"in-place: i in-place",
		"E: E r regexp-extended",
		"n: n quiet silent",
		"e: e expression",
		"f: f file",
	),
	"git push": names(
		"force: f force",
		"force-with-lease: force-with-lease",
		"force-if-includes: force-if-includes",
		"delete: d delete",
		"mirror: mirror",
		"all: all branches",
		"tags: tags",
		"prune: prune",
		"set-upstream: u set-upstream",
		"dry-run: n dry-run",
		"no-verify: no-verify",
		"push-option: o push-option",
	),
	"git clean": names(
		"force: f force",
		"d: d",
		"x: x",
		"X: X",
		"dry-run: n dry-run",
		"interactive: i interactive",
		"quiet: q quiet",
		"exclude: e exclude",
	),
	"git reset":    names("hard: hard", "soft: soft", "mixed: mixed", "merge: merge", "keep: keep", "quiet: q quiet", "patch: p patch"),
	"git branch":   names("delete: d delete D", "force: f force D M C", "move: m move M", "copy: c copy C", "list: l list", "all: a all", "remotes: r remotes"),
	"git checkout": names("force: f force", "b: b", "B: B", "patch: p patch", "orphan: orphan"),
	"git switch":   names("force: f force discard-changes", "create: c create", "force-create: C force-create"),
	"git commit":   names("all: a all", "amend: amend", "message: m message", "no-verify: n no-verify", "file: F file"),
	"git tag":      names("delete: d delete", "force: f force", "annotate: a annotate", "message: m message"),
	"git stash":    names("include-untracked: u include-untracked", "all: a all"),
	"git rebase":   names("interactive: i interactive", "onto: onto"),
	"git gc":       names("prune: prune", "aggressive: aggressive"),
}

// names builds a flagNames entry from "canonical: alias alias …" lines.
func names(lines ...string) map[string][]string {
	m := map[string][]string{}
	for _, l := range lines {
		canon, aliases, _ := strings.Cut(l, ":")
		for _, a := range strings.Fields(aliases) {
			m[a] = append(m[a], canon)
		}
	}
	return m
}

// valuedShort lists, per program, the short options that take a value, so
// that the rest of a cluster is read as that value (sed -e's/x/i/' is not
// -i; git push -of is -o with value f). -i of sed takes an optional
// attached suffix.
var valuedShort = map[string]string{
	"sed":        "efli",
	"grep":       "efmABCdD",
	"rg":         "efmABCgtTjM",
	"git commit": "mFCct",
	"git push":   "o",
	"git clean":  "e",
	"git log":    "nSGL",
	"git tag":    "mFu",
}

// singleDash lists programs whose long options take one dash (go test
// -run, find -name): a single-dash word is one flag, not a cluster.
var singleDash = map[string]bool{
	"go": true, "gofmt": true, "find": true, "java": true, "javac": true, "jiri": true,
	"terraform": true, "tofu": true,
}

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

// gitGlobalValued are git's options before the subcommand that take a
// value; gitGlobalFlags take none.
var gitGlobalValued = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true,
	"--super-prefix": true, "--config-env": true, "--attr-source": true, "--list-cmds": true,
}

var gitGlobalFlags = map[string]bool{
	"-p": true, "--paginate": true, "-P": true, "--no-pager": true, "--bare": true,
	"--no-replace-objects": true, "--literal-pathspecs": true, "--glob-pathspecs": true,
	"--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-optional-locks": true,
	"--no-advice": true, "--no-lazy-fetch": true, "--exec-path": true,
	"--html-path": true, "--man-path": true, "--info-path": true,
}

// gitSafeKeys are configuration keys whose values never name something
// git executes. `git -c` with any other key (core.pager, alias.*,
// core.sshCommand, diff.external, …) is at least Ask.
var gitSafeKeys = map[string]bool{
	"user.name": true, "user.email": true, "core.quotepath": true, "core.autocrlf": true,
	"core.safecrlf": true, "core.eol": true, "core.filemode": true, "core.ignorecase": true,
	"core.precomposeunicode": true, "core.abbrev": true, "core.longpaths": true,
	"core.symlinks": true, "init.defaultbranch": true, "diff.renames": true,
	"diff.algorithm": true, "diff.noprefix": true, "diff.mnemonicprefix": true,
	"diff.colormoved": true, "diff.relative": true, "diff.context": true,
	"merge.conflictstyle": true, "merge.ff": true, "pull.rebase": true, "pull.ff": true,
	"push.default": true, "push.autosetupremote": true, "fetch.prune": true,
	"rebase.autosquash": true, "rebase.autostash": true, "rebase.updaterefs": true,
	"commit.gpgsign": true, "tag.gpgsign": true, "gc.auto": true, "maintenance.auto": true,
	"protocol.version": true, "branch.sort": true, "tag.sort": true,
	"safe.directory": true,
}

var gitSafeKeyPrefixes = []string{
	"color.", "advice.", "i18n.", "log.", "status.", "column.", "grep.", "blame.",
	"versionsort.",
}

func gitKeySafe(key string) bool {
	key = strings.ToLower(key)
	if gitSafeKeys[key] {
		return true
	}
	for _, p := range gitSafeKeyPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
