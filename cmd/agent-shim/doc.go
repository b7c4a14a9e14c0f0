// Command agent-shim decides what an AI coding agent's tool calls may do,
// by the policy agents-setup writes into the agent's config.json, through
// package gate: shell commands parsed and matched rule by rule, file tools
// against the project's path scope, other tools by the user's tool
// patterns, with a built-in never-allow list that holds in every mode.
//
// # Usage
//
//	agent-shim hook claude-code|codex|gemini-cli [--config FILE]
//	agent-shim -c '<command line>' [arg0 [args...]]
//	agent-shim explain [--json] [--wide] [--runtime] [--config FILE] [--cwd DIR] [--tool NAME] [--] '<command line>'|'<tool input>'|-
//	agent-shim recommend [--json] [--apply] [--config FILE]
//	agent-shim run [--config FILE] -- PROGRAM [ARGS...]
//	agent-shim install claude-code|codex|gemini-cli [--settings FILE] [--config FILE] [--shell] [--managed]
//	agent-shim uninstall claude-code|codex|gemini-cli [--settings FILE] [--managed]
//	agent-shim doctor [--config FILE] [--json]
//	agent-shim log [--since D] [--verdict V] [--json] [-n N] [--log FILE]
//	agent-shim replay [--config NEW] [--log FILE] [--json]
//	agent-shim rules [--config FILE] [--notes] claude-code|codex|gemini-cli
//	agent-shim approve [--json] [<id>]
//	agent-shim approvals [--json]
//	agent-shim revoke <id>
//	agent-shim verify [--json] [-v] [--timeout D] [--parallel N] claude-code|codex|gemini-cli
//	agent-shim --version
//
// hook reads the agent's pre-tool-use JSON on stdin and answers in that
// agent's protocol:
//
//   - claude-code (PreToolUse): prints
//     {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}};
//     a call nothing decides (default) prints nothing, leaving it to
//     Claude's own permission rules. PostToolUse of a call answered "ask"
//     is logged as an approval (the person approved it).
//   - codex (PreToolUse): Codex honours only "deny": allow and default print
//     nothing; deny prints the deny above; ask prints a deny whose reason
//     says which grant would allow the call.
//   - gemini-cli (BeforeTool): prints {"decision":"allow|deny","reason":"…"};
//     default prints {} (Gemini's own confirmation applies); ask is a deny
//     saying how to allow it, as for Codex.
//
// Shell tools (Bash, run_shell_command, shell, …) are decided by their
// command line; file tools (Read, Write, Edit, MultiEdit, NotebookEdit,
// read_file, write_file, replace, read_many_files, apply_patch, …) by
// every path they name, against the scope: the checkout holding the
// call's cwd (the nearest .jiri_root/, else the git repository, else cwd
// itself, but never / or the home directory) and agentShim.pathScope.allow.
// Subagent, MCP and unknown tools are decided as a whole (tool patterns,
// then the level). The level comes from agentShim.profile, the mode from
// agentShim.mode (ask, allow, yolo).
//
// Shell mode stands in for the agent's shell: given a shell's argv (-c,
// -lc, -e -o pipefail -c, -i -c, …; parsed by hand), it decides the -c
// line and, when allowed, execs the real shell with the same arguments, so
// its exit status and signals reach the agent untouched. The real shell is
// $AGENT_SHIM_SHELL, else agentShim.shell, else /bin/bash; agent-shim
// refuses to exec itself. A call that needs a person is asked on the
// controlling terminal (/dev/tty): y once, s this exact command for the
// session, c every command of its program and subcommand (git remote …)
// for the session, t every command of its programs for the session (the
// prompt names the ask rules c and t let through), a always (saved
// as the user's own grant in config.json), n or an empty line no. Without
// a terminal it is refused with a hint saying which grant would allow it.
//
// On Linux an allowed line runs under the run-time layer (package
// supervisor): every program the line's process tree executes is decided
// by its exact argv (a deny rule, the never-allow list, or an ask rule
// nobody approved fails the exec with EPERM and one line on stderr), and
// below full access its writes are confined to the scope, the temporary
// and cache directories (EACCES elsewhere). agentShim.runtime: "on" (the
// default) falls back to exec where the kernel lacks seccomp user
// notification or Landlock, saying so once per session; "off" always
// execs; "require" refuses (126) without it. run wraps any program (an
// agent, a CI job) the same way; the program itself is decided too.
//
// The session is the hook input's session_id, else $AGENT_SHIM_SESSION,
// else the parent process (the agent). Answers for the session last across
// the shim's processes; every approval is logged.
//
// approve lists the calls an agent could not ask its person about (Codex,
// Gemini CLI, Claude Code in bypass mode: the hook refused them with an
// id); approve <id>, run by the person from a terminal of their own, lets
// the agent's retry of exactly that call (session, tool, command or path,
// directory) run once within 10 minutes. approvals lists the one-shot
// approvals and the session answers with their ids; revoke takes one back.
// An agent's tool calls that run approve or revoke, or write the state
// directory, are denied in every mode; approve refuses to run below the
// agent's processes.
//
// explain shows every command a line would run, how it was normalized, the
// rule that decides it (file, line, overlay, category) and the verdict: the
// decision hook and shell mode make, from the same gate (never-allow list,
// protected paths, mode, level, tool patterns, scope of the checkout
// holding the working directory or --cwd DIR). With - it reads the line
// from standard input. It names the policy file it read (and says so when
// it does not exist) and whether the run-time layer runs an allowed line
// here; its table fits 100 columns (a rule that decided is shown instead
// of its reason, the writes the level let through follow), --wide prints
// every column whole. --runtime decides as shell mode does with the
// run-time layer on: what the static reading cannot see into is checked as
// it runs. --tool NAME decides a call of that tool (an MCP server's, as
// the agent names it) whose input is the JSON object given, and names the
// tool rule that decided it.
//
// A mistyped command, flag or agent is a usage error that names the one
// meant (did you mean 'agent-shim explain'?). --version prints the
// module's version and the commit it was built from.
//
// recommend reads the approval log and suggests prefix grants (pattern,
// reason, evidence), never over-broad (no shell, interpreter, env, sudo,
// xargs, find, no glob); --apply adds them to config.json's allow list.
//
// install merges the hook into the agent's user settings, or --settings
// FILE: Claude Code's PreToolUse (with "onFailure": "block", so a hook that
// dies or times out blocks the call) and PostToolUse in
// ~/.claude/settings.json ($CLAUDE_CONFIG_DIR), Codex's PreToolUse in ~/.codex/hooks.json ($CODEX_HOME)
// with [features] hooks = true in the config.toml beside it, Gemini CLI's
// BeforeTool in ~/.gemini/settings.json; the command is this binary's
// absolute path (links resolved), never a name PATH must find. Every other
// byte of the file stays; an equal hook already there means nothing is
// written; otherwise the old file is backed up and the new one written
// atomically under a lock (through a symbolic link: the link stays).
// --config puts --config FILE into the hook command. --shell makes Claude
// Code run its Bash tool through shell mode: a link
// ~/.local/bin/agent-shim-bash to this binary and env.CLAUDE_CODE_SHELL
// pointing at it; for the others it prints what to set. Beside the hook,
// install places the second line (see rules), compiled from the policy
// the hook reads: Codex's rules/agent-shim.rules and Gemini CLI's
// policies/agent-shim.toml beside its settings, Claude Code's entries
// merged into the settings' permissions.deny and .ask. uninstall removes
// the hook groups of agent-shim and whatever install recorded adding,
// the second line's file and entries included. --managed (as root)
// writes the agent's managed tier instead, which a user-level settings
// file cannot override (/etc/claude-code/managed-settings.d/agent-shim.json,
// /etc/codex/requirements.toml, /etc/gemini-cli/settings.json); with
// --settings FILE it writes FILE as that tier would be written, for a
// test or for an image that copies it into place, and says that FILE is
// not the tier unless it is.
//
// doctor checks each agent whose settings are present: the hook installed
// for each event, by an absolute path to an executable, and a self-test
// that runs the installed command as the agent does (sh -c, the call on
// stdin, PATH=/usr/bin:/bin) for `rm -rf /` (must be denied) and `git
// status` (must not be blocked); the agents' switches that turn hooks off
// (Claude Code's disableAllHooks and allowManagedHooksOnly, Codex's
// [features] hooks, Gemini CLI's hooksConfig); the policy (config.json readable, profile, mode, requireHook,
// runtime); shell mode; the run-time layer; the export of decisions
// (agentShim.telemetry and the OTEL_ variables as doctor reads them: a
// setting the exporter would refuse, or no agent-shim-export beside
// agent-shim, fails). Its probes run with a state directory of their own
// and export off: nothing of them reaches the person's decision log. A
// failing check prints the command that fixes it.
//
// Hook and shell mode work together through single-use tickets: a hook
// call that leaves a shell command to the agent's own prompt (ask, or no
// rule) leaves an "ask" ticket (session, directory, exact command, 10
// minutes; trusted by its place in the protected state directory) that shell mode spends to run that line once
// without asking again, unless a deny rule matches; an allowed one leaves a
// "seen" ticket. With agentShim.requireHook, shell mode refuses a line no
// ticket vouches for: the hook died, timed out or was bypassed.
//
// log prints the recent decisions of every layer from the decision log,
// oldest first, one line each: time, verdict (→ the answer, when a person
// was asked), layer, the command (cut to fit) and the rule that decided
// with its file and line, or the reason. --since takes a duration (90m,
// 24h, 7d) or a time (2006-01-02, RFC 3339); --verdict one or more
// verdicts, comma-separated; -n the last N (default 50, 0 for all); --json
// prints the entries as JSON lines.
//
// replay decides every shell command of the decision log again, under
// another config.json (--config; default the agent's own, as it is now;
// write the one a manifest change would give with agents-setup --config
// NEW), and prints the verdicts that change (allow → ask, ask → allow, …) with
// counts and, per command, the reason then and now. Decisions a session's
// answer made are skipped: they depend on the session, not the policy. A
// --config (or default policy) that does not exist is an error (exit 1),
// never an empty policy. An ask nobody could answer (no terminal; Claude
// Code in bypassPermissions) is logged as ask, answered "unanswered", and
// replayed as the ask it was.
//
// rules prints the second line for an agent: the policy of config.json
// (its deny rules and the built-in never-allow list; for Claude Code its
// ask rules too, whose prompt is the hook's own) in that agent's own rule
// format, for when the hook is not there: a Codex execpolicy .rules file,
// a Claude Code settings fragment ({"permissions": {"deny", "ask"}}), a
// Gemini CLI policy TOML. Allow rules never are. The output is the same
// for the same policy. --notes prints instead, per policy rule, the
// spellings the agent's engine cannot express (package secondline says
// why for each agent).
//
// verify runs agent-shim-verify from beside this program (it serves a
// model API on 127.0.0.1, and this binary links no network code): it
// runs the agent release on PATH headless against a scripted model, in a
// temporary home holding a copy of the installed hook settings, and
// reports whether a denied command runs, an asked one is asked, a failing
// hook blocks and the second line holds with hooks turned off
// (cmd/agent-shim-verify says how).
//
// # Exit codes
//
//	0    explain, recommend, log, replay, rules, install, uninstall, approve,
//	     approvals, revoke: done;
//	     doctor: every check passed (warnings and notes aside); verify:
//	     green, every check passed; hook: answered (the answer is on
//	     stdout);
//	     shell mode never exits 0 itself: it execs the real shell, whose
//	     status (or signal, which a shell reports as 128+N) is the result
//	1    explain, recommend, log, replay: config.json, a log or an I/O
//	     operation failed; approve, revoke: no such call or answer (expired,
//	     spent), approve run below the agent that asked, or an I/O error; install, uninstall: a settings file that is not
//	     JSON (file:line:col) or not of the agents' shape, a file in the way
//	     of the shell link, or an I/O or lock error — nothing is written;
//	     doctor: some check failed (an agent unguarded, a hook found by
//	     PATH or missing, a self-test not denied or blocked, hooks turned
//	     off, an unreadable policy), the fix printed with it; verify: red,
//	     the failing checks named on stderr, or they could not be run (the
//	     agent not on PATH, no hook installed, agent-shim-verify missing)
//	2    usage error; hook: the blocking answer of all three protocols, with
//	     the reason on stderr: input that is not strict JSON (invalid
//	     UTF-8, a lone surrogate, a duplicate key), an unknown event or
//	     agent, a tool input without what the tool needs or with a NUL or
//	     CR in its command or paths, a cwd that is not an absolute
//	     directory, a bad config.json, no decision within the hook's
//	     deadline (10 s), any internal error; never an allow
//	126  shell mode: the command is denied, needs approval nobody can give,
//	     the person said no, or it cannot be decided or run (bad argv, bad
//	     config.json, the real shell is agent-shim, agentShim.runtime is
//	     "require" and the run-time layer is unavailable), or, with
//	     agentShim.requireHook, no hook call has seen it; one line on stderr
//	1    shell mode and run, with the run-time layer: the line changed a
//	     protected path inside the checkout (.git/config, .git/hooks, the
//	     manifests, agent settings); the change is undone and named on
//	     stderr
//	run: the status of PROGRAM (a signal kills agent-shim with the same
//	     signal); 126 when PROGRAM cannot be found, is refused or cannot
//	     run; 2 for a usage error
//
// # Files
//
//	$GEMINI_CONFIG_DIR/config.json, else $GEMINI_HOME/config/config.json,
//	else ~/.gemini/config/config.json
//	    the policy (--config overrides); "always" answers are added to its
//	    agentShim.tools.allow (tool:pattern) or agentShim.pathScope.allow
//	    (paths), and recommend --apply to its allow list, under
//	<config>.lock
//	    the lock agents-setup holds while it writes the file
//	$XDG_STATE_HOME/agent-shim/approvals.jsonl (default ~/.local/state/...)
//	    every approval, one JSON line: tool, key, decision, time, session
//	$XDG_STATE_HOME/agent-shim/decisions.jsonl (and .1, .2, .lock)
//	    every decision of hook and shell mode, one JSON line: time, agent,
//	    session, layer, cwd, tool, tool_use_id, command (secrets masked), verdict,
//	    reason, rule (text, list, category, overlay, file, line) or floor,
//	    answer; rotated past 8 MiB, two old files kept; a log that cannot
//	    be written loses the line, never the decision
//	$XDG_STATE_HOME/agent-shim/sessions/<id>.json (and .lock)
//	    a session's s and t answers, and the calls hook mode answered "ask"
//	$XDG_STATE_HOME/agent-shim/policy/
//	    a compact copy of config.json's policy, trusted only while the
//	    file's identity (device, inode, size, times) is unchanged; read in
//	    regions, only those a command needs. It lives in the protected
//	    state directory, outside everything the run-time layer lets the
//	    tree write, and holds no never-allow rule (those come from the
//	    binary)
//	$XDG_STATE_HOME/agent-shim/cache.key
//	    the key earlier versions signed tickets and session files with;
//	    no longer made or read, but one left on disk stays a secret
//	    (reading it asks)
//	$XDG_STATE_HOME/agent-shim/export.json, export.stamp*, export.lock, telemetry.json
//	    with export on (agentShim.telemetry or the OTEL_EXPORTER_OTLP_*
//	    variables): how far agent-shim-export has sent the decision log,
//	    when the next start is due (a stamp per combination of the OTEL_
//	    variables), its lock, and the copy of config.json's telemetry
//	    section the due call reads
//	$XDG_STATE_HOME/agent-shim/tickets/
//	    single-use hook tickets (mode 0600)
//	$XDG_STATE_HOME/agent-shim/approvals/
//	    one-shot approvals: calls waiting for agent-shim approve, and
//	    approved calls waiting for the agent's retry (10 minutes each)
//	$XDG_STATE_HOME/agent-shim/runs/<pid>.<start>
//	    while agent-shim run supervises an agent under the run-time layer:
//	    how the agent's hook knows its lines run under it
//	$XDG_STATE_HOME/agent-shim/installs.json and backups/
//	    what install added besides its hook groups, for uninstall; the
//	    settings files as they were before each change
//	~/.claude/settings.json, ~/.codex/hooks.json and config.toml,
//	~/.codex/rules/agent-shim.rules, ~/.gemini/settings.json,
//	~/.gemini/policies/agent-shim.toml, ~/.local/bin/agent-shim-bash
//	    what install and uninstall edit
//	/dev/tty
//	    where shell mode asks
package main
