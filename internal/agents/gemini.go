package agents

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Gemini is Google's Gemini CLI.
var Gemini = &Agent{
	Name:   "gemini-cli",
	unwrap: geminiWrapper,
}

// Gemini CLI's shell wrapper, as 0.61.0 writes it
// (packages/core/src/tools/shell.ts and services/shellExecutionService.ts):
// `bash -c` with
//
//	"shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=<tmp>/gemini-shell-XXXXXX/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n<command>\n)\n__code=$?\nexit $__code"
//
// the command trimmed and inlined, not quoted; it is accepted only when,
// read alone, it parses to exactly the statements the subshell holds.

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

// geminiWrapper recognises Gemini CLI's wrapper.
func geminiWrapper(l *wrapperLine) (Wrapped, bool) {
	line, f := l.src, l.f
	fixed := geminiFixed()
	if len(f.Stmts) != 5 || !strings.HasSuffix(line, geminiSuffix) {
		return Wrapped{}, false
	}
	for _, s := range f.Stmts {
		if !plainStmt(s) {
			return Wrapped{}, false
		}
	}
	if printed(f.Stmts[0]) != fixed[0] || printed(f.Stmts[3]) != fixed[2] || printed(f.Stmts[4]) != fixed[3] {
		return Wrapped{}, false
	}
	// _bgpids_file=<tmp>/gemini-shell-XXXXXX/bgpids.tmp
	as, ok := f.Stmts[1].Cmd.(*syntax.CallExpr)
	if !ok || len(as.Args) > 0 || len(as.Assigns) != 1 || len(f.Stmts[1].Redirs) > 0 {
		return Wrapped{}, false
	}
	a := as.Assigns[0]
	if a.Name == nil || a.Name.Value != "_bgpids_file" || a.Append || a.Naked || a.Index != nil || a.Array != nil {
		return Wrapped{}, false
	}
	p, ok := staticWord(a.Value)
	if !ok || filepath.Clean(p) != p || filepath.Base(p) != "bgpids.tmp" ||
		!geminiTempRE().MatchString(filepath.Base(filepath.Dir(p))) || filepath.Dir(filepath.Dir(p)) != tempDir(l.getenv) {
		return Wrapped{}, false
	}
	// (\n  trap …\n<command>\n)
	s := f.Stmts[2]
	sub, ok := s.Cmd.(*syntax.Subshell)
	if !ok || len(s.Redirs) > 0 || len(sub.Stmts) < 2 || printed(sub.Stmts[0]) != fixed[1] {
		return Wrapped{}, false
	}
	start := int(sub.Stmts[0].End().Offset())
	end := len(line) - len(geminiSuffix)
	if int(sub.Rparen.Offset()) != end+1 || start >= end || line[start] != '\n' {
		return Wrapped{}, false
	}
	cmd := line[start+1 : end]
	// Read alone, the command must be what the subshell runs.
	alone, err := syntax.NewParser(syntax.Variant(l.lang)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(alone.Stmts) != len(sub.Stmts)-1 {
		return Wrapped{}, false
	}
	for i, st := range alone.Stmts {
		if printed(st) != printed(sub.Stmts[i+1]) {
			return Wrapped{}, false
		}
	}
	return Wrapped{Command: cmd}, true
}
