package policycheck

import (
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/programs"
)

// What lint knows about programs. The knowledge table of package programs
// holds the options by which a program runs code or writes (tableRisk
// reads it); these lists add what it does not say: which programs are
// runners, interpreters, shells or build tools whole, and why naming them
// in an allow rule is risky. Move them there when it has such facts.

// risk is why allowing a program whole is risky, and what to write instead.
type risk struct {
	kind string // a runner, an interpreter, a shell, a build tool, a writer
	why  string
	fix  string
}

var (
	runnerRisk = func(what string) risk {
		return risk{"a runner", "runs " + what,
			"remove it and allow the commands it runs instead (agent-shim decides the command a runner runs; the agent's own grant may allow it whole)"}
	}
	interpreterRisk = risk{"an interpreter", "runs inline code and scripts (system(), exec, file writes)",
		"allow the exact scripts or read-only invocations instead (`python3 --version`), or move it to an asking category"}
	shellRisk = risk{"a shell", "runs any command line (-c, a script, stdin)",
		"remove it: agent-shim decides the commands a shell runs; allow those"}
	// buildRisk is a finding in read_only only: running the checkout's
	// build and tests is what local_changes is for (see lintRisky).
	buildRisk = risk{"a build tool", "runs recipes and scripts from files the agent can edit (Makefile, package.json, build files)",
		"move it to local_changes, where running the checkout's build is what the category allows"}
	writerRisk = risk{"a writer", "writes or deletes files",
		"move it out of read_only (to local_changes), or allow only the read-only form"}
)

// risky maps a program, or a program and subcommand, to its risk. A key of
// two words is matched before one.
var risky = map[string]risk{
	"env": runnerRisk("any program named after it (env rm -rf /)"), "xargs": runnerRisk("the program named after it, on its input"),
	"nice": runnerRisk("the program named after it"), "nohup": runnerRisk("the program named after it"),
	"timeout": runnerRisk("the program named after it"), "time": runnerRisk("the program named after it"),
	"stdbuf": runnerRisk("the program named after it"), "ionice": runnerRisk("the program named after it"),
	"setsid": runnerRisk("the program named after it"), "command": runnerRisk("the program named after it"),
	"exec": runnerRisk("the program named after it"), "builtin": runnerRisk("the builtin named after it"),
	"sudo": runnerRisk("any program as root"), "doas": runnerRisk("any program as root"),
	"watch": runnerRisk("a command line, again and again"), "parallel": runnerRisk("command lines from its arguments and input"),
	"flock": runnerRisk("the command named after it"), "strace": runnerRisk("the program named after it"),
	"chroot": runnerRisk("a program in another root"), "unshare": runnerRisk("a program in new namespaces"),
	"jiri runp":             runnerRisk("a command line in every project"),
	"repo forall":           runnerRisk("a command line in every project"),
	"git submodule foreach": runnerRisk("a command line in every submodule"),
	"npx":                   runnerRisk("any npm package's program, downloading it"),
	"awk":                   interpreterRisk, "gawk": interpreterRisk, "mawk": interpreterRisk, "nawk": interpreterRisk,
	"perl": interpreterRisk, "python": interpreterRisk, "python2": interpreterRisk, "python3": interpreterRisk,
	"ruby": interpreterRisk, "node": interpreterRisk, "deno": interpreterRisk, "bun": interpreterRisk,
	"php": interpreterRisk, "lua": interpreterRisk, "tclsh": interpreterRisk, "Rscript": interpreterRisk,
	"osascript": interpreterRisk, "vim": interpreterRisk, "emacs": interpreterRisk,
	"bash": shellRisk, "sh": shellRisk, "zsh": shellRisk, "dash": shellRisk, "ksh": shellRisk,
	"fish": shellRisk, "csh": shellRisk, "tcsh": shellRisk, "eval": shellRisk, "source": shellRisk, ".": shellRisk,
	"make": buildRisk, "ninja": buildRisk, "npm run": buildRisk, "yarn run": buildRisk, "pnpm run": buildRisk,
	"go run": buildRisk, "go generate": buildRisk, "cargo run": buildRisk, "bazel run": buildRisk,
	"gradle": buildRisk, "mvn": buildRisk,
	"sed": {"a writer", "writes files (-i, the w and W commands) and runs commands (e, s///e)",
		"allow `sed -n` to print lines; agent-shim asks for -i, w and e, but the agent's own grant may not"},
}

// writers only need a finding in read_only: elsewhere writing is the point.
var writers = map[string]bool{
	"tee": true, "dd": true, "cp": true, "mv": true, "rm": true, "truncate": true, "install": true,
	"ln": true, "chmod": true, "chown": true, "chgrp": true, "touch": true, "mkdir": true, "rmdir": true,
	"patch": true, "shred": true, "unlink": true, "rsync": true,
}

// harmlessWords are words after a program that make a rule harmless
// (`python3 --version`).
var harmlessWords = map[string]bool{"--version": true, "-V": true, "--help": true, "-h": true, "version": true, "help": true}

// subcommands lists, per program, every subcommand: a rule naming another
// is a typo (or an alias only its author has). git's list is `git help -a`
// (git 2.4x) plus common extensions.
var subcommands = map[string][]string{
	"git": {
		"add", "am", "annotate", "apply", "archimport", "archive", "backfill", "bisect", "blame", "branch",
		"bugreport", "bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format",
		"checkout", "checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit",
		"commit-graph", "commit-tree", "config", "count-objects", "credential", "credential-cache",
		"credential-store", "cvsexportcommit", "cvsimport", "cvsserver", "daemon", "describe", "diagnose",
		"diff", "diff-files", "diff-index", "diff-pairs", "diff-tree", "difftool", "fast-export", "fast-import",
		"fetch", "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo",
		"format-patch", "fsck", "fsck-objects", "fsmonitor--daemon", "gc", "get-tar-commit-id", "gitk", "gitweb",
		"grep", "gui", "hash-object", "help", "hook", "http-backend", "http-fetch", "http-push", "imap-send",
		"index-pack", "init", "init-db", "instaweb", "interpret-trailers", "last-modified", "log", "ls-files",
		"ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file",
		"merge-index", "merge-one-file", "merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index", "mv",
		"name-rev", "notes", "p4", "pack-objects", "pack-redundant", "pack-refs", "patch-id", "prune",
		"prune-packed", "pull", "push", "quiltimport", "range-diff", "read-tree", "rebase", "receive-pack",
		"reflog", "refs", "remote", "repack", "replace", "replay", "repo", "request-pull", "rerere", "reset",
		"restore", "rev-list", "rev-parse", "revert", "rm", "scalar", "send-email", "send-pack", "sh-i18n",
		"sh-setup", "shell", "shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout",
		"stage", "stash", "status", "stripspace", "submodule", "survey", "svn", "switch", "symbolic-ref", "tag",
		"unpack-file", "unpack-objects", "update-index", "update-ref", "update-server-info", "upload-archive",
		"upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version", "web--browse",
		"whatchanged", "worktree", "write-tree",
		// Common extensions (git-<name> on PATH).
		"lfs", "filter-repo", "absorb", "annex", "crypt", "flow", "review", "codereview", "cl", "ps", "branchless",
	},
	"go": {"bug", "build", "clean", "doc", "env", "fix", "fmt", "generate", "get", "help", "install", "list",
		"mod", "run", "telemetry", "test", "tool", "version", "vet", "work"},
}

// gitGlobalValued are git's options before the subcommand that take a
// value.
var gitGlobalValued = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--super-prefix": true, "--config-env": true, "--exec-path": false}

// shortAliases are the short spellings most programs give these long
// options; a deny rule naming one spelling should hold for the other.
var shortAliases = map[string]string{"--force": "-f", "--recursive": "-r", "--delete": "-d"}

// tableFacts indexes the program table's facts that make a program run
// code or write whatever its options, by block ("sed", "cp"): its
// program text (script) and the operands it always writes (targets).
// The facts about options (exec, runs, inline, writes, …) are no finding:
// agent-shim asks when such an option is used, and the grants agents-setup
// writes leave those options out (package manifest), so an agent applying
// config.json's grants itself does not allow them either.
var tableFacts = sync.OnceValue(func() map[string][]*programs.Fact {
	m := map[string][]*programs.Fact{}
	for _, f := range programs.Builtin().Facts() {
		switch f.Kind {
		case programs.Script, programs.Targets:
			m[f.Key] = append(m[f.Key], f)
		}
	}
	return m
})

// tableRisk is what the program table (package programs) says about a
// read_only rule that names block whole: the program text it runs, and
// the operands it writes, which no grant can leave out.
func tableRisk(block string) (risk, bool) {
	var runs, writes []string
	for _, f := range tableFacts()[block] {
		switch f.Kind {
		case programs.Script:
			runs = append(runs, "its "+f.Arg+" program")
		case programs.Targets:
			writes = append(writes, "its operands")
		}
	}
	switch {
	case len(runs) > 0:
		return risk{"a runner of code", "runs code through " + strings.Join(runs, ", ") + " (the program table)",
			"agent-shim reads the program and asks when it runs or writes; an agent applying config.json's grants itself does not: allow narrower lines"}, true
	case len(writes) > 0:
		return risk{"a writer", "writes through " + strings.Join(writes, ", ") + " (the program table)",
			"move it to local_changes, or allow only its read-only forms"}, true
	}
	return risk{}, false
}
