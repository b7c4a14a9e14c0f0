package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/runlayer"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// maxExplainInput bounds a command line read from standard input.
const maxExplainInput = 64 << 20

// explain shows every command a line would run, the rule that decides it
// and why. It is a formatter over the gate's Explain: the gate is loaded
// as hook and shell mode load it (the same config.json, compact cache,
// scope, mode, level, tool patterns and session answers), so explain says
// exactly what they would do. The exit status is 0 whatever the verdict.
func (e *env) explain(args []string) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	cfg := fs.String("config", "", "config.json to read (default: the agent's)")
	cwd := fs.String("cwd", "", "decide as for an agent working in `DIR` (default: the current directory)")
	if err := e.parseFlags(fs, "agent-shim explain [--json] [--config FILE] [--cwd DIR] [--] '<command line>'|-", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("explain takes the command line as one argument (quote it), or - to read it from standard input; got %d", fs.NArg())
	}
	line := fs.Arg(0)
	if line == "-" {
		data, err := io.ReadAll(io.LimitReader(e.stdin, maxExplainInput+1))
		if err != nil {
			return fmt.Errorf("reading the command line: %w", err)
		}
		if len(data) > maxExplainInput {
			return fmt.Errorf("command line longer than %d bytes", maxExplainInput)
		}
		line = strings.TrimSuffix(string(data), "\n")
	}
	s, err := e.open(context.Background(), openOptions{config: *cfg, cwd: *cwd})
	if err != nil {
		return err
	}
	defer s.close()
	x := s.g.Explain(line)
	shown, err := e.configPath(*cfg) // as given, not made absolute
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, explainJSON(shown, x))
	}
	writeExplain(e.stdout, shown, x)
	return nil
}

func writeExplain(w io.Writer, config string, x gate.Explanation) {
	if _, err := os.Stat(config); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "policy: %s does not exist: no rules, every command is default (mode %s, level %s)\n", config, x.Mode, x.Level)
	} else {
		fmt.Fprintf(w, "policy: %s (mode %s, level %s)\n", config, x.Mode, x.Level)
	}
	if x.ParseErr != nil {
		fmt.Fprintf(w, "parse error: %v\n", x.ParseErr)
	}
	if len(x.Commands) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POS\tNESTING\tCOMMAND\tVERDICT\tRULE\tREASON")
		for _, c := range x.Commands {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Command.Pos, nesting(c.Command),
				oneLine(runlayer.ArgvString(c.Argv)), c.Verdict, oneLine(ruleString(c.Rule)), oneLine(c.Reason))
		}
		tw.Flush()
		for _, c := range x.Commands {
			if c.Fact != "" {
				fmt.Fprintf(w, "fact: %s: %s\n", oneLine(runlayer.ArgvString(c.Argv)), oneLine(c.Fact))
			}
		}
	}
	fmt.Fprintf(w, "verdict: %s (%s)\n", x.Verdict, oneLine(x.Reason))
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
	Mode    string `json:"mode"`
	Level   string `json:"level"`
	Error   string `json:"error,omitempty"`
	// Writes are the protected paths the line writes, as named and
	// resolved: what approving it lets the line change of them.
	Writes []string `json:"writes,omitempty"`
	// NeverAllow is the first rule or shape of the built-in never-allow
	// list that applies to a command of the line.
	NeverAllow string        `json:"neverAllow,omitempty"`
	Commands   []jsonCommand `json:"commands"`
}

type jsonCommand struct {
	Pos     string   `json:"pos"`
	Nesting []string `json:"nesting"`
	Source  string   `json:"source"`
	Argv    []string `json:"argv"`
	Static  bool     `json:"static"`
	Verdict string   `json:"verdict"`
	// Matcher is the command policy's verdict before mode, level, tool
	// patterns, scope and the built-in lists.
	Matcher    string    `json:"matcher"`
	Rule       *jsonRule `json:"rule"`
	Reason     string    `json:"reason"`
	NeverAllow string    `json:"neverAllow,omitempty"`
	Protected  string    `json:"protected,omitempty"`
	Tool       string    `json:"toolPattern,omitempty"`
	InScope    []string  `json:"inScope,omitempty"`
	// Fact is the program fact that made the verdict stricter.
	Fact string `json:"fact,omitempty"`
}

type jsonRule struct {
	Text     string `json:"text"`
	List     string `json:"list"`
	Category string `json:"category,omitempty"`
	Overlay  string `json:"overlay,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

func explainJSON(config string, x gate.Explanation) jsonResult {
	out := jsonResult{Verdict: x.Verdict.String(), Reason: x.Reason, Config: config,
		Mode: x.Mode.String(), Level: x.Level.String(), Commands: []jsonCommand{}}
	if x.ParseErr != nil {
		out.Error = x.ParseErr.Error()
	}
	if x.Covers != nil {
		out.Writes = x.Covers.Writes
	}
	for _, c := range x.Commands {
		jc := jsonCommand{
			Pos:        c.Command.Pos.String(),
			Nesting:    []string{},
			Source:     c.Command.Source,
			Argv:       c.Argv,
			Static:     c.Command.Static(),
			Verdict:    c.Verdict.String(),
			Matcher:    c.Matcher.String(),
			Reason:     c.Reason,
			NeverAllow: c.NeverAllow,
			Protected:  c.Protected,
			InScope:    c.InScope,
			Fact:       c.Fact,
		}
		if c.Tool != gate.ToolUnmatched {
			jc.Tool = c.Tool.String()
		}
		if out.NeverAllow == "" {
			out.NeverAllow = c.NeverAllow
		}
		if jc.Argv == nil {
			jc.Argv = []string{}
		}
		for _, n := range c.Command.Nesting {
			jc.Nesting = append(jc.Nesting, n.Kind)
		}
		if r := c.Rule; r != nil {
			jc.Rule = &jsonRule{Text: r.Text, List: r.Decision.String(),
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
