package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/syntax"
)

// The agents' shell wrappers.
//
// An agent whose shell is shell mode does not hand it the command its
// tool call carried: it hands it a line of its own around that command.
// Deciding that whole line refuses every call (Claude Code's wrapper
// writes its working directory to a file outside the scope), and the hook
// saw only the command, so tickets would never match. unwrap recognises
// exactly the wrapper's own parts, by parsing, and returns the wrapped
// command, which shell mode decides as the line. A line with anything more
// (a part appended, a source from elsewhere, a cwd file outside the temp
// directory) is no wrapper and is decided whole: fail closed.
//
// The forms, read from the agents' own code:
//
//   - Claude Code 2.1.332 (the native binary of
//     @anthropic-ai/claude-code-linux-x64, its buildExecCommand): it runs
//     `<shell> -c -l '<line>'` (`-c` alone when its snapshot is in use),
//     the line being parts joined by " && ":
//
//     source <config>/shell-snapshots/snapshot-….sh 2>/dev/null || true
//     \builtin shopt -u extglob 2>/dev/null || true      (zsh: \builtin setopt NO_EXTENDED_GLOB …)
//     { \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1 || true
//     { \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true
//     eval '<command>' < /dev/null
//     pwd -P >| <tmp>/claude-<id>-cwd
//
//     with no source when there is no snapshot, the command quoted as
//     '…'"'"'…' when it holds a quote, bare when it is all safe
//     characters, and `< /dev/null` left out when it reads its own input.
//     <tmp> is $CLAUDE_CODE_TMPDIR, else the temp directory ($TMPDIR,
//     else /tmp). Parts that only some settings add (CLAUDE_ENV_FILE's
//     script, CLAUDE_CODE_SHELL_PREFIX, the sandbox's TMPDIR, an rm guard
//     that puts a directory first on PATH) are not recognised: such a line
//     is decided whole. At start Claude Code also runs `env` and a script
//     that writes the snapshot; they are no wrapper and are decided as
//     what they are.
//   - Codex (codex-rs/core/src/tools/runtimes/mod.rs,
//     maybe_wrap_shell_lc_with_snapshot): `[shell, "-lc", command]`, the
//     command itself; with a shell snapshot,
//     `[user shell, "-c", "if . '<CODEX_HOME>/shell_snapshots/….sh' >/dev/null 2>&1; then :; fi\n\nexec '<shell>' -c '<command>'"]`,
//     whose command runs in <shell>. A snapshot preamble that also
//     restores variables is not recognised.
//   - Gemini CLI 0.61.0 (packages/core/src/tools/shell.ts and
//     services/shellExecutionService.ts): `bash -c` with
//     "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=<tmp>/gemini-shell-XXXXXX/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n<command>\n)\n__code=$?\nexit $__code",
//     the command trimmed and inlined, not quoted; it is accepted only
//     when, read alone, it parses to exactly the statements the subshell
//     holds.

// wrapped is a command found inside an agent's wrapper.
type wrapped struct {
	// agent is the agent whose wrapper it is.
	agent string
	// command is the command the agent's tool call carried.
	command string
	// shell is the shell that runs command when the wrapper names one
	// (Codex's exec '<shell>' -c); "" when it is the line's own shell.
	shell string
}

// unwrap returns the command inside line when line is exactly one of the
// agents' wrappers, read as shell (the real shell's path or name) reads it.
func unwrap(line, shell string, getenv func(string) string) (wrapped, bool) {
	lang := syntax.LangBash
	if filepath.Base(shell) == "zsh" {
		lang = syntax.LangZsh
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(line), "")
	if err != nil {
		return wrapped{}, false
	}
	for _, fn := range []func(string, syntax.LangVariant, *syntax.File, func(string) string) (wrapped, bool){
		claudeWrapper, codexWrapper, geminiWrapper,
	} {
		if w, ok := fn(line, lang, f, getenv); ok {
			return w, true
		}
	}
	return wrapped{}, false
}

// printer prints the parts of a wrapper; shell mode reads one line, so
// one printer and its buffer serve all.
var printer struct {
	sync.Mutex
	p *syntax.Printer
	b bytes.Buffer
}

// printed is the canonical text of a node: equal texts are equal syntax.
func printed(n syntax.Node) string {
	printer.Lock()
	defer printer.Unlock()
	if printer.p == nil {
		printer.p = syntax.NewPrinter()
	}
	printer.b.Reset()
	if err := printer.p.Print(&printer.b, n); err != nil {
		return "\x00" // never equal to a canonical part
	}
	return printer.b.String()
}

// canonical parses src (one statement) and prints it back: the form a
// recognised part must print as. It panics on a bad constant.
func canonical(src string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		panic("wrapper constant does not parse: " + src)
	}
	return printed(f.Stmts[0])
}

// safeWord are the characters a word may hold unquoted in an agent's
// quoting (Claude Code's jo, shell-quote): nothing in them expands.
var safeWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:=@+,-]+$`) })

// staticWord returns the value of a word that expands to itself: literal
// parts of safe characters, single quotes (not $'…') and double quotes
// holding only literal text with nothing that expands or escapes.
func staticWord(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) == 0 {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !safeWord().MatchString(p.Value) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(l.Value, "$`\\!") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plainStmt reports whether s is a statement with nothing around its
// command: not negated, not in the background, no coprocess.
func plainStmt(s *syntax.Stmt) bool {
	return s != nil && !s.Negated && !s.Background && !s.Coprocess && !s.Disown
}

// callOf returns the words of a simple command without assignments, each
// as a static word, and its redirections; ok is false for anything else.
func callOf(s *syntax.Stmt) (args []string, ok bool) {
	c, isCall := s.Cmd.(*syntax.CallExpr)
	if !plainStmt(s) || !isCall || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return nil, false
	}
	for _, w := range c.Args {
		v, ok := staticWord(w)
		if !ok {
			return nil, false
		}
		args = append(args, v)
	}
	return args, true
}

// redirTo returns the target of s's one redirection if it is op to a
// static word, with no file descriptor named.
func redirTo(s *syntax.Stmt, op syntax.RedirOperator) (string, bool) {
	if len(s.Redirs) != 1 {
		return "", false
	}
	r := s.Redirs[0]
	if r.Op != op || r.N != nil || r.Hdoc != nil {
		return "", false
	}
	return staticWord(r.Word)
}

// andOrParts splits an and-or list (the file's one statement) at its
// "&&": each part is the statements its "||" join. ok is false for
// anything but one plain and-or list.
func andOrParts(f *syntax.File) (parts [][]*syntax.Stmt, ok bool) {
	if len(f.Stmts) != 1 {
		return nil, false
	}
	var leaves []*syntax.Stmt
	var ops []syntax.BinCmdOperator
	var walk func(s *syntax.Stmt) bool
	walk = func(s *syntax.Stmt) bool {
		if !plainStmt(s) {
			return false
		}
		b, isBin := s.Cmd.(*syntax.BinaryCmd)
		if !isBin {
			leaves = append(leaves, s)
			return true
		}
		if len(s.Redirs) > 0 || b.Op != syntax.AndStmt && b.Op != syntax.OrStmt {
			return false
		}
		if !walk(b.X) {
			return false
		}
		ops = append(ops, b.Op)
		return walk(b.Y)
	}
	if !walk(f.Stmts[0]) {
		return nil, false
	}
	cur := []*syntax.Stmt{leaves[0]}
	for i, op := range ops {
		if op == syntax.AndStmt {
			parts = append(parts, cur)
			cur = nil
		}
		cur = append(cur, leaves[i+1])
	}
	return append(parts, cur), true
}

// Claude Code's fixed parts, canonical.
var claudeFixed = sync.OnceValue(func() map[string]string {
	const zshOpts = "NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST "
	m := map[string]string{}
	for kind, srcs := range map[string][]string{
		"shopt": {
			`\builtin shopt -u extglob 2>/dev/null`,
			`\builtin setopt ` + zshOpts + `NO_EQUALS 2>/dev/null`,
			`\builtin setopt ` + zshOpts + `NO_RC_QUOTES NO_EQUALS 2>/dev/null`,
			`{ \builtin shopt -u extglob || \builtin setopt ` + zshOpts + `NO_EQUALS; } >/dev/null 2>&1`,
			`{ \builtin shopt -u extglob || \builtin setopt ` + zshOpts + `NO_RC_QUOTES NO_EQUALS; } >/dev/null 2>&1`,
			// Before 2.1.3xx: no \builtin.
			`shopt -u extglob 2>/dev/null`,
			`setopt NO_EXTENDED_GLOB 2>/dev/null`,
		},
		"which":    {`{ \builtin unalias -- 'which'; \builtin unset -f -- 'which'; } >/dev/null 2>&1`},
		"unsetenv": {`{ \builtin unalias -- 'unsetenv'; \builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1`},
	} {
		for _, src := range srcs {
			m[canonical(src)] = kind
		}
	}
	return m
})

var (
	claudeSnapshotRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^snapshot-[A-Za-z0-9._-]+\.sh$`) })
	claudeCwdFileRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^claude-[0-9a-f]{1,8}(-[A-Za-z0-9_-]+)?-cwd$`) })
)

// claudeWrapper recognises Claude Code's wrapper (see above): its parts
// in their order, each at most once, the eval and the cwd file last.
func claudeWrapper(_ string, _ syntax.LangVariant, f *syntax.File, getenv func(string) string) (wrapped, bool) {
	parts, ok := andOrParts(f)
	if !ok || len(parts) < 2 {
		return wrapped{}, false
	}
	// The optional parts, in the order Claude Code joins them.
	order := []string{"source", "shopt", "which", "unsetenv"}
	next := 0
	n := len(parts)
	for _, p := range parts[:n-2] {
		kind := ""
		switch {
		case len(p) != 2 || printed(p[1]) != "true":
			return wrapped{}, false // every optional part is "x || true"
		case claudeFixed()[printed(p[0])] != "":
			kind = claudeFixed()[printed(p[0])]
		case isClaudeSource(p[0], getenv):
			kind = "source"
		default:
			return wrapped{}, false
		}
		i := next
		for i < len(order) && order[i] != kind {
			i++
		}
		if i == len(order) {
			return wrapped{}, false // out of order, or twice
		}
		next = i + 1
	}
	// eval '<command>' [< /dev/null]
	ev := parts[n-2]
	if len(ev) != 1 {
		return wrapped{}, false
	}
	args, ok := callOf(ev[0])
	if !ok || len(args) != 2 || args[0] != "eval" {
		return wrapped{}, false
	}
	if len(ev[0].Redirs) > 0 {
		if to, ok := redirTo(ev[0], syntax.RdrIn); !ok || to != "/dev/null" {
			return wrapped{}, false
		}
	}
	// pwd -P >| <tmp>/claude-<id>-cwd
	pw := parts[n-1]
	if len(pw) != 1 {
		return wrapped{}, false
	}
	pargs, ok := callOf(pw[0])
	if !ok || strings.Join(pargs, " ") != "pwd -P" {
		return wrapped{}, false
	}
	to, ok := redirTo(pw[0], syntax.RdrClob)
	if !ok || filepath.Clean(to) != to || !claudeCwdFileRE().MatchString(filepath.Base(to)) ||
		filepath.Dir(to) != claudeTempDir(getenv) || !freshFile(to) {
		return wrapped{}, false
	}
	return wrapped{agent: "claude-code", command: args[1]}, true
}

// lstat is os.Lstat; tests replace it.
var lstat = os.Lstat

// freshFile reports whether the wrapper's own write to p (`>|`) lands in
// p itself: p does not exist, or is a regular file with no other link.
// In a temp directory the agent can write, a link planted at the next
// cwd file's name would have `pwd -P >|` write a path of the agent's
// choosing (a directory named `x;curl …|sh`) into ~/.bashrc. A link made
// after this check is left to the run-time layer, which confines writes.
func freshFile(p string) bool {
	fi, err := lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}

// isClaudeSource reports whether s is `source <snapshot> 2>/dev/null`
// (or `.`) of one of Claude Code's snapshots.
func isClaudeSource(s *syntax.Stmt, getenv func(string) string) bool {
	args, ok := callOf(s)
	if !ok || len(args) != 2 || args[0] != "source" && args[0] != "." {
		return false
	}
	if len(s.Redirs) != 1 || s.Redirs[0].N == nil || s.Redirs[0].N.Value != "2" || s.Redirs[0].Op != syntax.RdrOut {
		return false
	}
	if to, ok := staticWord(s.Redirs[0].Word); !ok || to != "/dev/null" {
		return false
	}
	p := args[1]
	if filepath.Clean(p) != p || !claudeSnapshotRE().MatchString(filepath.Base(p)) {
		return false
	}
	return underAgentDir(filepath.Dir(p), "shell-snapshots", getenv("CLAUDE_CONFIG_DIR"), getenv("HOME"), ".claude")
}

// underAgentDir reports whether dir is <base>/<sub> for the agent's
// directory: the one its variable names, else <home>/<dot>.
func underAgentDir(dir, sub, fromEnv, home, dot string) bool {
	base := fromEnv
	if base == "" && home != "" {
		base = filepath.Join(home, dot)
	}
	return base != "" && filepath.IsAbs(base) && dir == filepath.Join(filepath.Clean(base), sub)
}

// claudeTempDir is where Claude Code puts its cwd files:
// $CLAUDE_CODE_TMPDIR, else the temp directory as Node reads it ($TMPDIR
// without trailing slashes, else /tmp).
func claudeTempDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CODE_TMPDIR"); d != "" {
		return filepath.Clean(d)
	}
	return tempDir(getenv)
}

// tempDir is os.tmpdir() of Node on Linux and macOS.
func tempDir(getenv func(string) string) string {
	if d := strings.TrimRight(getenv("TMPDIR"), "/"); d != "" {
		return filepath.Clean(d)
	}
	return "/tmp"
}

// codexShells are the shells Codex execs a command with.
var codexShells = map[string]bool{"bash": true, "zsh": true, "sh": true}

// codexWrapper recognises Codex's snapshot wrapper (see above).
func codexWrapper(_ string, _ syntax.LangVariant, f *syntax.File, getenv func(string) string) (wrapped, bool) {
	if len(f.Stmts) != 2 {
		return wrapped{}, false
	}
	// if . '<snapshot>' >/dev/null 2>&1; then :; fi
	s := f.Stmts[0]
	ic, ok := s.Cmd.(*syntax.IfClause)
	if !plainStmt(s) || !ok || len(s.Redirs) > 0 || ic.Else != nil || len(ic.Cond) != 1 || len(ic.Then) != 1 {
		return wrapped{}, false
	}
	if printed(ic.Then[0]) != ":" {
		return wrapped{}, false
	}
	src := ic.Cond[0]
	args, ok := callOf(src)
	if !ok || len(args) != 2 || args[0] != "." || len(src.Redirs) != 2 {
		return wrapped{}, false
	}
	r0, r1 := src.Redirs[0], src.Redirs[1]
	if to, ok := staticWord(r0.Word); !ok || to != "/dev/null" || r0.Op != syntax.RdrOut || r0.N != nil {
		return wrapped{}, false
	}
	if to, ok := staticWord(r1.Word); !ok || to != "1" || r1.Op != syntax.DplOut || r1.N == nil || r1.N.Value != "2" {
		return wrapped{}, false
	}
	p := args[1]
	if filepath.Clean(p) != p || !strings.HasSuffix(p, ".sh") || strings.HasPrefix(filepath.Base(p), ".") ||
		!underAgentDir(filepath.Dir(p), "shell_snapshots", getenv("CODEX_HOME"), getenv("HOME"), ".codex") {
		return wrapped{}, false
	}
	// exec '<shell>' -c '<command>' ['<arg>'...]
	ex := f.Stmts[1]
	eargs, ok := callOf(ex)
	if !ok || len(ex.Redirs) > 0 || len(eargs) < 4 || eargs[0] != "exec" || eargs[2] != "-c" {
		return wrapped{}, false
	}
	// The shell is the session's (an absolute path) or the one the
	// model's argv named (bash, found on PATH).
	sh := eargs[1]
	if !codexShells[filepath.Base(sh)] || sh != filepath.Base(sh) && (!filepath.IsAbs(sh) || filepath.Clean(sh) != sh) {
		return wrapped{}, false
	}
	return wrapped{agent: "codex", command: eargs[3], shell: sh}, true
}

// Gemini CLI's parts, canonical.
var geminiFixed = sync.OnceValue(func() []string {
	return []string{
		canonical("shopt -u promptvars nullglob extglob nocaseglob dotglob"),
		canonical(`trap 'jobs -p > "$_bgpids_file"' EXIT`),
		canonical("__code=$?"),
		canonical("exit $__code"),
	}
})

var geminiTempRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gemini-shell-[A-Za-z0-9]{6}$`) })

// geminiSuffix ends Gemini CLI's wrapper, after the command.
const geminiSuffix = "\n)\n__code=$?\nexit $__code"

// geminiWrapper recognises Gemini CLI's wrapper (see above).
func geminiWrapper(line string, lang syntax.LangVariant, f *syntax.File, getenv func(string) string) (wrapped, bool) {
	fixed := geminiFixed()
	if len(f.Stmts) != 5 || !strings.HasSuffix(line, geminiSuffix) {
		return wrapped{}, false
	}
	for _, s := range f.Stmts {
		if !plainStmt(s) {
			return wrapped{}, false
		}
	}
	if printed(f.Stmts[0]) != fixed[0] || printed(f.Stmts[3]) != fixed[2] || printed(f.Stmts[4]) != fixed[3] {
		return wrapped{}, false
	}
	// _bgpids_file=<tmp>/gemini-shell-XXXXXX/bgpids.tmp
	as, ok := f.Stmts[1].Cmd.(*syntax.CallExpr)
	if !ok || len(as.Args) > 0 || len(as.Assigns) != 1 || len(f.Stmts[1].Redirs) > 0 {
		return wrapped{}, false
	}
	a := as.Assigns[0]
	if a.Name == nil || a.Name.Value != "_bgpids_file" || a.Append || a.Naked || a.Index != nil || a.Array != nil {
		return wrapped{}, false
	}
	p, ok := staticWord(a.Value)
	if !ok || filepath.Clean(p) != p || filepath.Base(p) != "bgpids.tmp" ||
		!geminiTempRE().MatchString(filepath.Base(filepath.Dir(p))) || filepath.Dir(filepath.Dir(p)) != tempDir(getenv) {
		return wrapped{}, false
	}
	// (\n  trap …\n<command>\n)
	s := f.Stmts[2]
	sub, ok := s.Cmd.(*syntax.Subshell)
	if !ok || len(s.Redirs) > 0 || len(sub.Stmts) < 2 || printed(sub.Stmts[0]) != fixed[1] {
		return wrapped{}, false
	}
	start := int(sub.Stmts[0].End().Offset())
	end := len(line) - len(geminiSuffix)
	if int(sub.Rparen.Offset()) != end+1 || start >= end || line[start] != '\n' {
		return wrapped{}, false
	}
	cmd := line[start+1 : end]
	// Read alone, the command must be what the subshell runs.
	alone, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(alone.Stmts) != len(sub.Stmts)-1 {
		return wrapped{}, false
	}
	for i, st := range alone.Stmts {
		if printed(st) != printed(sub.Stmts[i+1]) {
			return wrapped{}, false
		}
	}
	return wrapped{agent: "gemini-cli", command: cmd}, true
}
