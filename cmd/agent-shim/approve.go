package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/agent-shim/agent-shim/gate"
	"github.com/agent-shim/agent-shim/internal/approvals"
	"github.com/agent-shim/agent-shim/internal/report"
	"github.com/agent-shim/agent-shim/internal/sessions"
)

// The person's side of the calls agents cannot put to them (Codex, Gemini
// CLI, Claude Code in bypass mode): the hook refuses such a call with an
// id, `agent-shim approve <id>` (from a terminal of the person's own)
// lets the agent's retry of it run once (package approvals, OneShots).
// `approvals` lists them and the session answers, `revoke` takes one back.
// An agent's own tool calls that run approve or revoke are refused by the
// gate in every mode.

const (
	approveSynopsis   = "agent-shim approve [--json] [<id>]"
	approvalsSynopsis = "agent-shim approvals [--json]"
	revokeSynopsis    = "agent-shim revoke <id>"
)

// oneShots is the one-shot approvals of the state directory.
func (e *env) oneShots() (approvals.OneShots, error) {
	dir, err := sessions.StateDir(e.getenv)
	return approvals.OneShots{Dir: dir, Now: ticketNow}, err
}

// approve lists the pending calls, or approves one.
func (e *env) approve(args []string) error {
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := e.parseFlags(fs, approveSynopsis, args); err != nil {
		return err
	}
	store, err := e.oneShots()
	if err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		all, err := store.List()
		if err != nil {
			return err
		}
		var pending []approvals.OneShot
		for _, o := range all {
			if o.Pending() {
				pending = append(pending, o)
			}
		}
		if *asJSON {
			return report.JSON(e.stdout, report.NonNil(pending))
		}
		if len(pending) == 0 {
			fmt.Fprintln(e.stdout, "no call waits for approval")
			return nil
		}
		report.OneShots(e.stdout, pending)
		fmt.Fprintf(e.stdout, "approve one with: agent-shim approve <id>\n")
		return nil
	case 1:
	default:
		return usagef("approve takes one id; got %d arguments", fs.NArg())
	}
	id := fs.Arg(0)
	all, err := store.List()
	if err != nil {
		return err
	}
	for _, o := range all {
		if o.ID == id && o.Below() {
			// The agent that asked is an ancestor of this process:
			// this is the agent approving itself.
			return fmt.Errorf("approving %s: this process runs below the agent that asked for it; a person approves it from a terminal of their own", id)
		}
	}
	o, err := store.Approve(id, gate.ByTerminal)
	if err != nil {
		return err
	}
	if err := approvals.Log(e.getenv, o.Approval); err != nil {
		store.Revoke(id)
		return err
	}
	if *asJSON {
		return report.JSON(e.stdout, o)
	}
	fmt.Fprintf(e.stdout, "approved %s: %s %s\n  in %s, for %s (session %s)\n  the agent's retry of it runs once, until %s\n",
		o.ID, o.Tool, report.OneLine(o.Key), o.Dir, o.Agent, o.Session, o.Expires.Local().Format(time.Kitchen))
	return nil
}

// approvalsCmd lists the one-shot approvals (pending and approved) and
// the session answers, each with the id revoke takes.
func (e *env) approvalsCmd(args []string) error {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := e.parseFlags(fs, approvalsSynopsis, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("approvals takes no arguments")
	}
	store, err := e.oneShots()
	if err != nil {
		return err
	}
	once, err := store.List()
	if err != nil {
		return err
	}
	grants, err := sessions.Grants(store.Dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return report.JSON(e.stdout, struct {
			Once     []approvals.OneShot `json:"once"`
			Sessions []sessions.Grant    `json:"sessions"`
		}{report.NonNil(once), report.NonNil(grants)})
	}
	if len(once) == 0 {
		fmt.Fprintln(e.stdout, "no one-shot approvals")
	} else {
		report.OneShots(e.stdout, once)
	}
	report.SessionAnswers(e.stdout, grants)
	fmt.Fprintln(e.stdout, "take one back with: agent-shim revoke <id>")
	return nil
}

// revoke takes back a one-shot approval or a session answer.
func (e *env) revoke(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("revoke", flag.ContinueOnError)
	if err := e.parseFlags(fs, revokeSynopsis, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("revoke takes one id (agent-shim approvals lists them)")
	}
	id := fs.Arg(0)
	store, err := e.oneShots()
	if err != nil {
		return err
	}
	if strings.HasPrefix(id, "s") && len(id) == 9 {
		if g, err := sessions.RevokeGrant(ctx, store.Dir, id); err == nil {
			fmt.Fprintf(e.stdout, "revoked %s: the %s answer for %s %s in session %s\n", id, g.Decision, g.Tool, report.OneLine(g.Key), g.Session)
			return nil
		}
	}
	o, err := store.Revoke(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked %s: %s %s\n", id, o.Tool, report.OneLine(o.Key))
	return nil
}
