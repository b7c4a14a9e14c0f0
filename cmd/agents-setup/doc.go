// Command agents-setup turns the permission manifests of a checkout into the
// agent's config.json: grants under userSettings.globalPermissionGrants that
// the agent applies itself, and the shim's rules under "agentShim".
//
// # Usage
//
//	agents-setup [-p PROFILE] [-a CMD]... [-k CMD]... [-d CMD]...
//	             [--allow-list FILE]... [--ask-list FILE]... [--deny-list FILE]...
//	             [--config FILE] [--state-dir DIR] [--root DIR] [--dry-run] [--init]
//	agents-setup --status | --rollback [N] | --reset [--dry-run]
//	agents-setup [--check [-p PROFILE]] [--lint [--json]] [--root DIR]
//	agents-setup [--config FILE] [--state-dir DIR] hooks install|uninstall|status [--root DIR] [--force]
//
// The checkout root is the nearest ancestor holding .jiri_root/, else the top
// of the enclosing git repository; --root names it directly. Its manifests
// are .agents/config/permissions/<category>.txt in the root and in each
// vendor/<x> git repository, in sorted order. A checkout without manifests
// gets the built-in defaults, which --init writes into it for editing.
// Outside any checkout the built-in defaults apply, or, when ad-hoc rules are
// given, only those.
//
// The profile (read-only, local-changes, external-changes, full-access)
// decides which categories are allowed, asked or denied; it defaults to the
// last one applied, else local-changes. -a, -k and -d add ad-hoc rules to
// allow, ask and deny, and --allow-list, --ask-list and --deny-list read
// them from files (one rule per line, # comments). Ad-hoc rules count as
// managed: a later run without them removes them.
//
// Grants added to config.json by hand are kept: a run replaces only the
// grants the previous run wrote (a three-way reconcile). A grant the
// manifests place in one list is removed from the other lists, though.
// Nothing is written when nothing changed; an unchanged re-run returns
// without expanding the manifests.
//
// --dry-run prints the additions and removals per list and writes nothing.
// --status prints the profile, the counts of managed and custom grants per
// list, the manifest files, the recent history and the rules per list. Both
// speak in rule lines, the manifest line and where it is
// ("+ allow  git status   (.agents/config/permissions/read_only.txt:195)"),
// never longer than 300 characters; with --json they print the rules with
// their full grants as JSON instead. --rollback N restores config.json
// from before the last N changes (removing it if the first of them created
// it); backups of the 10 last changes are kept. --reset removes the managed
// grants and rules and keeps the ones added by hand.
//
// --check runs the policy tests: each overlay's .agents/config/tests.txt,
// lines "allow|ask|deny|default <command line>" with # comments, and
// "profile: a, b" lines naming the profiles of the tests after them (else
// all four; -p keeps one). Each command is decided by the same gate hook mode
// builds for that profile from the manifests (the built-in never-allow list
// included); a mismatch prints "file:line: profile: command: expected X, got
// Y (reason and rule)" and exits 1. Every apply (but --reset) runs them first
// and writes nothing when one fails. --lint reports allow rules for runners,
// interpreters, shells, build tools and (in read_only) writers, rules a
// stronger list always overrides, duplicates across overlays, unknown git and
// go subcommands, and never-allow rules a usual spelling gets past, each with
// file:line and a fix; --json prints them as JSON; exit 1 when there are any.
//
// After a change, the user services listed in the overlays' services.txt are
// restarted with systemctl --user try-restart (skipped without systemctl).
//
// # Git hooks
//
// "hooks install" installs post-checkout, post-merge and post-rewrite (rebase,
// amend) hooks in the checkout root (when it is a git repository) and in every vendor/<x> repository; see
// package hooks for how (configuration-based hooks on git 2.54 and later, a
// script that chains an existing hook before). The hook runs
// "agents-setup --root ROOT [--config FILE] [--state-dir DIR] hooks run -- ARGS",
// which re-applies the last applied profile and the ad-hoc rules of the last
// manual run, as recorded then (list files by their content, so a deleted or
// edited list file changes nothing), when the manifests changed since the
// hook's last apply or a manual run wrote state.json since. It always
// exits 0, never reads stdin, skips file checkouts, collapses the parallel
// runs of a jiri update into one apply, and appends errors to hooks.log in the
// state directory.
//
// A hook run trusts the repository only to narrow the policy: it applies a
// new deny or ask rule and a removed allow rule at once, and holds a new
// allow rule or a removed deny or ask rule until a person runs agents-setup
// (a checkout of a branch, or an agent that wrote a manifest, cannot widen
// what the agent may do). --status and hooks.log list what is held, with
// the manifest file and line; a manual run applies it and names the
// widening in its summary. After --reset (or a rollback to before the first apply)
// it leaves config.json alone until the next manual run; --rollback also
// restores the ad-hoc rules the hooks re-apply. "hooks uninstall" removes the
// hooks and puts back the ones they replaced byte for byte; "hooks status"
// reports each repository and exits 3 unless all are installed (a foreign
// hook chained counts as installed).
//
// # Transactions
//
// A change (apply, reset, rollback) writes its backup and the new config
// and state to temporary files first, records itself in pending.json in the
// state directory, checks that config.json is still the file it read (an
// edit made meanwhile without the lock is merged as a hand edit, never
// overwritten), and only then exchanges the new config with config.json
// (renameat2 RENAME_EXCHANGE where the system has it): an edit that landed
// between that check and the exchange is exchanged back and merged too.
// The exchange is the commit. An error before it changes nothing; an error
// after it (a failed sync of the directory) says "written, but …", with
// the change in the history and pending.json kept for the next run. A
// crash at any point is completed or undone by the next run, which tells
// a change that was committed from one that was not by the temporary
// config pending.json names (never by config.json's content, which an
// editor may have changed since), and removes the temporary files of dead
// runs. An edit swapped out by a crash in the instant after the exchange
// is kept in <config>.edit-<time>, which the note names. config.json is
// validated first (and agent-shim validates it the same way when it reads
// it): a grant whose regular expression
// does not compile (file, list, index, the RE2 error), an unknown
// agentShim.mode (ask, allow, yolo) or agentShim.runtime (on, off, require)
// and a key given twice are errors, and nothing is written.
//
// --rollback restores the backup exactly when config.json is still what the
// rolled back change wrote; otherwise it keeps the edits made since (grants
// added by hand, the user's agentShim keys). A rollback is itself a change
// with a backup: --rollback undoes it.
//
// # Exit codes
//
//	0  success, including "nothing to do"
//	1  error: config.json or state.json unreadable (the message names the
//	   file, with line and column for bad JSON), a manifest line that cannot be
//	   read (file:line), an I/O or lock failure; nothing is written
//	   --check: a policy test failed; --lint: there are findings
//	2  usage error: unknown flag or profile, conflicting modes, an argument
//
//	3  "hooks status" only: a repository's hooks are missing, stale or
//	   removed (not an error: 1 is)
//
// "hooks run" always exits 0.
//
// # Files
//
//	$GEMINI_CONFIG_DIR/config.json, else $GEMINI_HOME/config/config.json,
//	else ~/.gemini/config/config.json
//	    the agent's config (--config overrides)
//	<config>.lock
//	    the lock every run holds while it reads and writes
//	$XDG_STATE_HOME/agents-setup/<name>-<hash of the config path>/state.json
//	    (default ~/.local/state/...; --state-dir overrides) the profile,
//	    digests of the managed grants, a fingerprint of the last run's inputs
//	    (manifests, profile, ad-hoc rules, the config's size, time and inode)
//	    and the history
//	<state dir>/backups/NNNNNN.json
//	    the config and state before each change, the 10 newest; written
//	    first, so that a change interrupted before state.json is recognized
//	<state dir>/adhoc.json
//	    the ad-hoc rules of the last apply, by content, which the hooks
//	    re-apply, and those before each backed-up change (for --rollback)
//	<state dir>/pending.json
//	    a change in progress (see Transactions); the next run completes or
//	    undoes it
//	<state dir>/hooks.json, hook-run.*, hooks.log
//	    the repositories hooks were installed in, with the digest and file
//	    identity of each hook script installed (a run that would write, and
//	    a hook run, refuse while one was changed since: it runs as you at
//	    every checkout; hooks install repairs it), the hook run's lock,
//	    dirty mark and manifest fingerprint, and the hook run's error log
//	<state dir>/state.json.unreadable-<time>
//	    a state.json that could not be read, kept by --reset (with every
//	    backup) instead of overwritten
//	<root>/.agents/config/permissions/<category>.txt, <root>/vendor/<x>/.agents/config/...
//	    the manifests; services.txt beside permissions/ names the services
//	    to restart; tests.txt beside permissions/ holds the policy tests
//
// A run that would write (apply, --reset, --rollback, hooks install and
// uninstall) refuses when a hook script it installed was changed since
// (see hooks.json) or when git started it (a hook, an alias,
// core.fsmonitor: git runs what the repository's files say, and the agent
// can write those); "hooks run", which only narrows the policy, is not
// refused for the second. On Linux only: the ancestry is read from /proc,
// and a process that detaches from git escapes that check, not the first.
//
// Every file agents-setup reads is opened without blocking and read only
// when it is a regular file (a directory where one is meant), up to a
// bound: a FIFO or a device at one is an error naming it, never a hang.
package main
