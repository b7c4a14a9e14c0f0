package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/agent-shim/agent-shim/decisionlog"
	"github.com/agent-shim/agent-shim/internal/report"
)

// Test seams: the decision log can be turned off (for the benchmark that
// measures what it costs), and the clock of `log --since` set.
var (
	logDecisions = true
	now          = time.Now
)

// decisionLog returns the writer of the decision log, or nil when its path
// cannot be found: a decision is never refused for want of a log.
func (e *env) decisionLog() *decisionlog.Writer {
	if !logDecisions {
		return nil
	}
	path, err := decisionlog.Path(e.getenv)
	if err != nil {
		return nil
	}
	if st, err := e.ticketStore(); err == nil {
		if p, ok := st.RunLog(); ok {
			// Under agent-shim run, whose tree cannot write the log:
			// the run takes these entries in after (runlayer.TakeTreeLog).
			return decisionlog.NewWriter(p, decisionlog.Options{})
		}
	}
	return decisionlog.NewWriter(path, decisionlog.Options{})
}

const logSynopsis = "agent-shim log [--since D] [--verdict V] [--json] [-n N] [--log FILE]"

// logcmd prints the recent decisions.
func (e *env) logcmd(args []string) error {
	fs := flag.NewFlagSet("log", flag.ContinueOnError)
	since := fs.String("since", "", "only decisions since D: a duration (90m, 24h, 7d) or a time (2006-01-02, RFC 3339)")
	verdict := fs.String("verdict", "", "only these verdicts: allow, ask, deny, default (comma-separated)")
	asJSON := fs.Bool("json", false, "print the entries as JSON lines")
	n := fs.Int("n", 50, "print the last N decisions (0: all)")
	file := fs.String("log", "", "the decision log (default: $XDG_STATE_HOME/agent-shim/decisions.jsonl)")
	if err := e.parseFlags(fs, logSynopsis, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("log takes no arguments; got %q", fs.Arg(0))
	}
	var from time.Time
	if *since != "" {
		var err error
		if from, err = report.Since(*since, now()); err != nil {
			return usagef("log: --since: %v", err)
		}
	}
	want, err := report.Verdicts(*verdict)
	if err != nil {
		return usagef("log: --verdict: %v", err)
	}
	if *n < 0 {
		return usagef("log: -n must not be negative")
	}
	path, err := e.logPath(*file)
	if err != nil {
		return err
	}
	entries, skipped, err := decisionlog.Read(path, 0)
	if err != nil {
		return err
	}
	out := report.Select(entries, from, want, *n)
	if *asJSON {
		for _, en := range out {
			line, err := decisionlog.Marshal(en)
			if err != nil {
				return err
			}
			if _, err := e.stdout.Write(line); err != nil {
				return err
			}
		}
	} else {
		report.Log(e.stdout, out)
	}
	if skipped > 0 {
		fmt.Fprintf(e.stderr, "agent-shim: warning: %d damaged lines skipped in %s\n", skipped, path)
	}
	return nil
}

// logPath is --log, else the default decision log.
func (e *env) logPath(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return decisionlog.Path(e.getenv)
}
