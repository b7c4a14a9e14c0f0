package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agent-shim/agent-shim/config"
	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// explain shows every command a line would run, the rule that decides it
// and why. The exit status is 0 whatever the verdict.
func (e *env) explain(args []string) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	cfg := fs.String("config", "", "config.json to read (default: the agent's)")
	if err := e.parseFlags(fs, "agent-shim explain [--json] [--config FILE] [--] '<command line>'", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("explain takes the command line as one argument (quote it); got %d", fs.NArg())
	}
	path, err := e.configPath(*cfg)
	if err != nil {
		return err
	}
	f, err := config.Load(path)
	if err != nil {
		return err
	}
	p := policyOf(f)
	if err := p.Check(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res := p.Decide(fs.Arg(0))
	// The verdict is the config's policy. Hook and shell mode also apply
	// the built-in never-allow list, which explain names when it differs.
	never := ""
	if res.Decision != matcher.Deny {
		if nr := neverPolicy().Decide(fs.Arg(0)); nr.Decision == matcher.Deny {
			for _, v := range nr.Commands {
				if v.Decision == matcher.Deny && v.Rule != nil {
					never = v.Rule.Text
					break
				}
			}
		}
	}
	if *asJSON {
		out := explainJSON(f, res)
		out.NeverAllow = never
		return writeJSON(e.stdout, out)
	}
	writeExplain(e.stdout, f, res)
	if never != "" {
		fmt.Fprintf(e.stdout, "note: hook and shell mode deny it: the built-in never-allow list has `%s`\n", never)
	}
	return nil
}

// neverPolicy is the built-in never-allow list as a policy of deny rules.
func neverPolicy() *matcher.Policy {
	p := matcher.New()
	for _, l := range gate.NeverAllow() {
		p.Add(matcher.Deny, l, matcher.Source{Category: "never_allow", Overlay: "builtin"})
	}
	return p
}

func writeExplain(w io.Writer, f *config.File, res *matcher.Result) {
	if !f.Exists {
		fmt.Fprintf(w, "policy: %s does not exist: no rules, every command is default\n", f.Path)
	} else {
		fmt.Fprintf(w, "policy: %s\n", f.Path)
	}
	if res.Err != nil {
		fmt.Fprintf(w, "parse error: %v\n", res.Err)
	}
	if len(res.Commands) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POS\tNESTING\tCOMMAND\tVERDICT\tRULE\tREASON")
		for _, v := range res.Commands {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Command.Pos, nesting(v.Command),
				oneLine(argvString(v.Argv)), v.Decision, oneLine(ruleString(v.Rule)), oneLine(v.Reason))
		}
		tw.Flush()
		for _, v := range res.Commands {
			if v.Fact != "" {
				fmt.Fprintf(w, "fact: %s: %s\n", oneLine(argvString(v.Argv)), oneLine(v.Fact))
			}
		}
	}
	fmt.Fprintf(w, "verdict: %s (%s)\n", res.Decision, oneLine(res.Reason))
}

func nesting(c *shellparse.Command) string {
	if len(c.Nesting) == 0 {
		return "-"
	}
	kinds := make([]string, len(c.Nesting))
	for i, f := range c.Nesting {
		kinds[i] = f.Kind
	}
	return strings.Join(kinds, " › ")
}

func argvString(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func ruleString(r *matcher.Rule) string {
	if r == nil {
		return "no rule"
	}
	s := r.Decision.String() + " `" + r.Text + "`"
	var from []string
	if src := r.Source.String(); src != "" {
		from = append(from, src)
	}
	if r.Source.Overlay != "" && r.Source.Overlay != "." && r.Source.File == "" {
		from = append(from, "overlay "+r.Source.Overlay)
	}
	if r.Source.Category != "" {
		from = append(from, r.Source.Category)
	}
	if len(from) == 0 {
		from = append(from, "config.json "+r.Decision.String()+" list")
	}
	return s + " (" + strings.Join(from, ", ") + ")"
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

type jsonResult struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Config  string `json:"config"`
	Error   string `json:"error,omitempty"`
	// NeverAllow is the rule of the built-in never-allow list that hook
	// and shell mode would deny the line by, when the verdict is not deny.
	NeverAllow string        `json:"neverAllow,omitempty"`
	Commands   []jsonCommand `json:"commands"`
}

type jsonCommand struct {
	Pos     string    `json:"pos"`
	Nesting []string  `json:"nesting"`
	Source  string    `json:"source"`
	Argv    []string  `json:"argv"`
	Static  bool      `json:"static"`
	Verdict string    `json:"verdict"`
	Rule    *jsonRule `json:"rule"`
	Reason  string    `json:"reason"`
	// Fact is the program fact that made the verdict stricter.
	Fact string `json:"fact,omitempty"`
}

type jsonRule struct {
	Text     string `json:"text"`
	List     string `json:"list"`
	Grant    string `json:"grant,omitempty"`
	Category string `json:"category,omitempty"`
	Overlay  string `json:"overlay,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

func explainJSON(f *config.File, res *matcher.Result) jsonResult {
	out := jsonResult{Verdict: res.Decision.String(), Reason: res.Reason, Config: f.Path, Commands: []jsonCommand{}}
	if res.Err != nil {
		out.Error = res.Err.Error()
	}
	for _, v := range res.Commands {
		jc := jsonCommand{
			Pos:     v.Command.Pos.String(),
			Nesting: []string{},
			Source:  v.Command.Source,
			Argv:    v.Argv,
			Static:  v.Command.Static(),
			Verdict: v.Decision.String(),
			Reason:  v.Reason,
			Fact:    v.Fact,
		}
		if jc.Argv == nil {
			jc.Argv = []string{}
		}
		for _, n := range v.Command.Nesting {
			jc.Nesting = append(jc.Nesting, n.Kind)
		}
		if r := v.Rule; r != nil {
			jc.Rule = &jsonRule{Text: r.Text, List: r.Decision.String(), Grant: r.Grant,
				Category: r.Source.Category, Overlay: r.Source.Overlay, File: r.Source.File, Line: r.Source.Line}
		}
		out.Commands = append(out.Commands, jc)
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
