// Package manifest reads the permission manifests of a checkout and turns
// each manifest line into the command(regex:…) grants an agent applies itself.
//
// A manifest is a file .agents/config/permissions/<category>.txt holding one
// command line per rule, such as "git push --force", with blank lines and #
// comments (inline too, outside quotes) skipped. A line shaped name(…), such
// as command(regex:^foo$), is a grant already and passes through unchanged.
// services.txt beside permissions/ names user services to restart after a
// change.
//
// A checkout's root is the nearest ancestor holding .jiri_root/, else the top
// of the enclosing git repository (linked worktrees included). Its overlays
// are the root's own .agents/config/ and then vendor/<x>/.agents/config/ for
// each vendor/<x> that is a git repository, in sorted order; same-named
// manifests are concatenated, root first. A checkout without any manifest
// uses the defaults embedded in the binary.
//
// Grants expands a line into regular expressions (RE2, Go syntax) that match
// the whole command text the way Fuchsia's `fx agents setup` does: env
// prefixes, binary path prefixes, git/fx/ffx/jiri global flags, git flags
// anywhere, git clean force detection, sed -i variants, trailing / and ~
// targets and help variants. Unlike the original, no grant contains a pattern
// that can reach past a shell operator, an expansion or a redirection, so a
// grant never matches "git status; rm -rf /"; env prefixes other than a
// short list of harmless names (LANG=, LC_*=, TZ=, TERM=, NO_COLOR=, CI=,
// GOOS=, ...; never PATH=, LD_*, GIT_*, ...), git -c keys that run programs
// and options that make a harmless program write files or run others
// (sed -i, rg --pre, find -exec, git rebase -x, ...) are not matched either. Such commands fall
// to the agent's default, and agent-shim decides them.
//
// DenyGrants expands a line for the deny list instead: its grants match
// more (anything after the command, runners such as sudo or env in front,
// any env assignment), so the agent denies more, never less.
package manifest
