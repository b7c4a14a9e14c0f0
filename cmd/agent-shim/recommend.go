package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/report"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// recommend turns the approval log into suggested grants (approvals.Recommend)
// and, with --apply, adds them to config.json's allow list as the user's
// own grants, under the lock agents-setup takes.
func (e *env) recommend(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recommend", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the recommendations as a JSON array")
	apply := fs.Bool("apply", false, "add the recommended grants to config.json's allow list")
	cfg := fs.String("config", "", "config.json to change with --apply (default: the agent's)")
	if err := e.parseFlags(fs, "agent-shim recommend [--json] [--apply] [--config FILE]", args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("recommend takes no arguments; got %q", fs.Arg(0))
	}
	logPath, err := approvals.Path(e.getenv)
	if err != nil {
		return err
	}
	approved, err := approvals.ReadFile(logPath)
	if err != nil {
		return err
	}
	recs := approvals.Recommend(approved)
	if recs == nil {
		recs = []approvals.Recommendation{}
	}
	if *asJSON {
		if err := report.JSON(e.stdout, recs); err != nil {
			return err
		}
	} else {
		report.Recommendations(e.stdout, logPath, len(approved), recs)
	}
	if !*apply || len(recs) == 0 {
		return nil
	}
	path, err := e.configPath(*cfg)
	if err != nil {
		return err
	}
	grants := make([]string, len(recs))
	for i, r := range recs {
		grants[i] = r.Grant
	}
	added, kept, err := sessions.AddGrants(ctx, path, grants)
	if err != nil {
		return err
	}
	out := e.stdout
	if *asJSON {
		out = e.stderr // stdout holds the JSON
	}
	for _, g := range added {
		fmt.Fprintf(out, "added %s to %s\n", g, path)
	}
	for _, g := range kept {
		fmt.Fprintf(out, "kept %s: already in one of the grant lists of %s\n", g, path)
	}
	return nil
}
