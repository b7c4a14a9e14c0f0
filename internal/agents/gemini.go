package agents

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/agent-shim/agent-shim/internal/fileedit"
	"github.com/agent-shim/agent-shim/internal/secondline"
	"github.com/agent-shim/agent-shim/matcher"
	"mvdan.cc/sh/v3/syntax"
)

// Gemini is Google's Gemini CLI.
//
// Its hooks (https://geminicli.com/docs/hooks/reference, "Configuration
// schema"): ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini when set;
// gemini-cli packages/core/src/utils/paths.ts homedir(), config/storage.ts
// getGlobalSettingsPath()), read with comments, {"hooks": {"BeforeTool":
// [{"matcher": regex, "hooks": [{"type": "command", "command": …, "name":
// …, "timeout": milliseconds}]}]}}. BeforeTool takes tool_name and
// tool_input (run_shell_command: command); the answer is {"decision":
// "allow"|"deny", "reason": …} on stdout with exit 0 ("reason" is
// required when denied and is sent to the agent); `{}` decides nothing.
// Exit 1 is "a warning … the CLI continues", a timeout lets the call run:
// no fail-closed switch, so the command is guarded; exit 2 or more with
// output that is not JSON denies (gemini-cli hookRunner.ts). It cannot
// ask: ask is answered deny, with how to approve the call.
// hooksConfig.enabled false, or hooksConfig.disabled naming the hook,
// turns it off.
//
// Its managed tier is the system settings, /etc/gemini-cli/settings.json
// on Linux, /Library/Application Support/GeminiCli/settings.json on macOS
// ($GEMINI_CLI_SYSTEM_SETTINGS_PATH when set, as Gemini CLI reads it),
// which override every other settings file key by key. So a user's
// "hooksConfig": {"enabled": false} turns every hook off, the system's
// included, unless the system file sets the key itself (Gemini CLI 0.61;
// TestManagedTier/gemini-cli in e2e): install pins it there. What that
// cannot hold: hooksConfig.disabled is merged across the files as a
// union, so a user's file that lists the hook's name switches the
// system's hook off all the same (e2e TestManagedTierGeminiDisabledList);
// doctor reports it, and the gate protects the user's settings.
var Gemini = &Agent{
	Name:      "gemini-cli",
	Title:     "Gemini CLI",
	Program:   "gemini",
	Pre:       "BeforeTool",
	ShellTool: "run_shell_command",
	answer:    geminiAnswer,
	User: Tier{Path: func(getenv func(string) string) (string, error) {
		if d := getenv("GEMINI_CLI_HOME"); d != "" {
			return filepath.Join(d, ".gemini", "settings.json"), nil
		}
		return agentFile(getenv, "", ".gemini", "settings.json")
	}},
	Managed: Tier{
		Path: func(getenv func(string) string) (string, error) {
			if p := getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); p != "" {
				return p, nil
			}
			if runtime.GOOS == "darwin" {
				return "/Library/Application Support/GeminiCli/settings.json", nil
			}
			return "/etc/gemini-cli/settings.json", nil
		},
		Caveat:   " (but Gemini CLI merges hooksConfig.disabled across its files: a user file listing agent-shim there switches it off; doctor checks it)",
		OKDetail: "a user-level settings file cannot remove the hook, except by listing it in hooksConfig.disabled (Gemini CLI merges that list; doctor checks it)",
		pin:      pinGeminiHooks,
		unpin:    unpinGeminiHooks,
		disabled: geminiDisabled,
	},
	Comments: true,
	group: func(cmd, _ string) Group {
		return Group{Matcher: ".*", Hooks: []Handler{{Type: "command", Name: "agent-shim", Command: cmd, Timeout: HookTimeout * 1000}}}
	},
	FailsOpen: true,
	Env:       []string{"GEMINI_CLI_HOME"},
	// It runs bash from PATH for its shell tool and its hooks alike, so
	// shell mode in bash's place would refuse the hook itself.
	NoShell: "runs its own choice of bash, not a shell it can be given",
	stateDirs: func(getenv func(string) string) []string {
		if d := getenv("GEMINI_CLI_HOME"); d != "" {
			return []string{filepath.Join(d, ".gemini")}
		}
		return dirs(getenv, "", ".gemini")
	},
	// Its settings (hooks, MCP servers, tool discovery and call
	// commands), its policies, extensions, custom commands (!{…} runs
	// a shell), the trusted folders (whose settings and hooks it
	// loads) and the .env it loads; config/ holds agent-shim's own
	// policy when agents-setup writes it there.
	Guarded: []string{"settings.json", "policies/", "extensions/", "commands/", "trustedFolders.json", ".env", "config/"},
	off:     geminiOff,
	unwrap:  geminiWrapper,
	// A policy file in the user tier's policies directory beside the
	// settings, or the admin tier's in the system configuration
	// directory (Storage.getSystemPoliciesDir: not beside
	// $GEMINI_CLI_SYSTEM_SETTINGS_PATH).
	Rules: SecondLine{Compile: secondline.Gemini, File: func(settings string, managed bool) string {
		dir := filepath.Dir(settings)
		if managed {
			dir = "/etc/gemini-cli"
			if runtime.GOOS == "darwin" {
				dir = "/Library/Application Support/GeminiCli"
			}
		}
		return filepath.Join(dir, "policies", "agent-shim.toml")
	}},
	Proven: Version{0, 61, 0},
	// -p in yolo mode, signed in with an API key, which honours
	// GOOGLE_GEMINI_BASE_URL.
	Headless: Headless{
		Args: func(_, prompt string) []string {
			return []string{"-p", prompt, "--output-format", "text", "--model", "gemini-2.5-flash", "--yolo"}
		},
		Env: func(base string) []string {
			return []string{"GOOGLE_GEMINI_BASE_URL=" + base, "GEMINI_API_KEY=agent-shim-verify-not-a-key", "GEMINI_CLI_NO_RELAUNCH=true"}
		},
		Tools: []string{"run_shell_command"},
		Input: func(_, line string) map[string]any {
			return map[string]any{"command": line, "description": "agent-shim verify"}
		},
		Prepare:  geminiPrepare,
		HooksOff: func(settings string) error { return setSetting(settings, true, false, "hooksConfig", "enabled") },
	},
}

// geminiAnswer: allow and deny as Gemini's decision; Default is `{}`
// (Gemini's own confirmation applies); ask is a deny that says how to
// approve the call.
func geminiAnswer(w io.Writer, a Answer) error {
	switch a.Verdict {
	case matcher.Allow:
		return decisionAnswer(w, "allow", "agent-shim: "+a.Reason)
	case matcher.Default:
		return decisionAnswer(w, "", "")
	case matcher.Ask:
		return decisionAnswer(w, "deny", "agent-shim: "+needsApproval(a))
	}
	return decisionAnswer(w, "deny", "agent-shim: "+a.Reason)
}

// geminiOff: hooksConfig.enabled false, or hooksConfig.disabled naming
// the hook.
func geminiOff(f *Found) []Check {
	var out []Check
	hc := f.Root.Member("hooksConfig")
	if hc == nil {
		return nil
	}
	if en := hc.Member("enabled"); en != nil && string(f.Data[en.Start:en.End]) == "false" {
		out = append(out, Check{Name: "hooksConfig", Status: Fail, Detail: "hooksConfig.enabled is false: Gemini CLI runs no hooks", Fix: "set hooksConfig.enabled to true in " + f.Path})
	}
	if dis := hc.Member("disabled"); dis != nil && dis.Kind == '[' {
		for _, el := range dis.Elems {
			if s, ok := fileedit.Decoded(f.Data, el).(string); ok && s == "agent-shim" {
				out = append(out, Check{Name: "hooksConfig", Status: Fail, Detail: `hooksConfig.disabled lists "agent-shim"`, Fix: "remove it from hooksConfig.disabled in " + f.Path})
			}
		}
	}
	return out
}

// geminiDisabled reports a user settings file that lists the agent-shim
// hook in hooksConfig.disabled, which Gemini CLI merges across its
// files: the system tier's hook is off.
func geminiDisabled(path string, data []byte) (why, fix string) {
	root, err := fileedit.ParseJSONC(path, data)
	if err != nil {
		return "", ""
	}
	list := root.Member("hooksConfig").Member("disabled")
	if list == nil {
		return "", ""
	}
	for _, el := range list.Elems {
		if name, ok := fileedit.Decoded(data, el).(string); ok && name == "agent-shim" {
			return "lists agent-shim in hooksConfig.disabled, which Gemini CLI merges across its settings files: the hook is off",
				`remove "agent-shim" from hooksConfig.disabled in ` + path
		}
	}
	return "", ""
}

// pinGeminiHooks makes Gemini CLI's system settings say
// hooksConfig.enabled true (see Gemini). A false there is the
// administrator's choice against hooks: install refuses rather than undo
// it. What it adds is noted in rec.Created ("hooksConfig" or
// "hooksConfig.enabled"), for unpinGeminiHooks.
func pinGeminiHooks(path string, data []byte, rec *Record) ([]byte, error) {
	root, err := fileedit.ParseJSONC(path, data)
	if err != nil {
		return nil, err
	}
	if root.Kind != '{' {
		return nil, fmt.Errorf("%s:1:1: the settings are not a JSON object", path)
	}
	note := func(name string) {
		if !slices.Contains(rec.Created, name) {
			rec.Created = append(rec.Created, name)
		}
	}
	hc := root.Member("hooksConfig")
	switch {
	case hc == nil:
		note("hooksConfig")
		return fileedit.Append(data, root, root, "hooksConfig", map[string]any{"enabled": true})
	case hc.Kind != '{':
		line, col := fileedit.LineCol(data, hc.Start)
		return nil, fmt.Errorf("%s:%d:%d: hooksConfig is not an object", path, line, col)
	}
	en := hc.Member("enabled")
	if en == nil {
		note("hooksConfig.enabled")
		return fileedit.Append(data, root, hc, "enabled", true)
	}
	switch string(data[en.Start:en.End]) {
	case "true":
		return data, nil
	case "false":
		line, col := fileedit.LineCol(data, en.Start)
		return nil, fmt.Errorf("%s:%d:%d: hooksConfig.enabled is false: every hook is off, the one install would add too; remove the key (install sets it true) or set it true", path, line, col)
	}
	line, col := fileedit.LineCol(data, en.Start)
	return nil, fmt.Errorf("%s:%d:%d: hooksConfig.enabled is not a boolean", path, line, col)
}

// unpinGeminiHooks takes out what pinGeminiHooks added, as rec notes it:
// hooksConfig.enabled, and hooksConfig when install made it and nothing
// else is in it. A value changed since is left alone.
func unpinGeminiHooks(path string, data []byte, rec *Record) ([]byte, error) {
	root, err := fileedit.ParseJSONC(path, data)
	if err != nil {
		return nil, err
	}
	hc := root.Member("hooksConfig")
	madeTable, madeKey := slices.Contains(rec.Created, "hooksConfig"), slices.Contains(rec.Created, "hooksConfig.enabled")
	if hc == nil || hc.Kind != '{' || !madeTable && !madeKey {
		return data, nil
	}
	i := hc.MemberIndex("enabled")
	if i < 0 || string(data[hc.Members[i].Val.Start:hc.Members[i].Val.End]) != "true" {
		return data, nil
	}
	forget := func(name string) {
		rec.Created = slices.DeleteFunc(rec.Created, func(c string) bool { return c == name })
	}
	forget("hooksConfig.enabled")
	if madeTable && len(hc.Members) == 1 {
		forget("hooksConfig")
		return fileedit.Remove(data, root, root.MemberIndex("hooksConfig")), nil
	}
	return fileedit.Remove(data, hc, i), nil
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
