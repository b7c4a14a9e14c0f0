package matcher

import (
	"fmt"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
)

// Reaching other machines is not confined by anything that runs on this
// one: a download, an API call, an upload or an install from a registry
// is decided from what the line shows, where the run-time layer holds or
// not. The program table says which programs and options reach other
// machines (network facts) and, for some, that their operands name them
// (hosts facts): curl http://localhost:8080/ reaches none. Package
// shellparse adds what interpreter code shows of it (Command.Network).
// Each is a floor, unless the level lets the agent reach other machines
// (SetNetwork) or an allow rule names the program or subcommand whose
// fact it is (a person's `curl` allows curl).

// SetNetwork sets whether reaching other machines is a reason to ask: not
// when allowed, as the external-changes level and above allow it. The
// default is that it is.
func (p *Policy) SetNetwork(allowed bool) { p.network = allowed }

// networkLimit is the floor of a command that reaches other machines.
func networkLimit(why string, f *programs.Fact) limit {
	l := limit{why: why, network: true}
	if f != nil {
		l.fact, l.key = f.String(), f.Key
	}
	return l
}

// networkFloors adds the floor of a program that reaches other machines
// whatever its options, unless it only prints its help or version, or
// every machine its operands name is this one.
func (c *call) networkFloors() {
	if c.block == nil {
		c.unknownNetwork()
		return
	}
	f := c.block.NetworkFact()
	if f == nil || c.helpOnly() {
		return
	}
	what := "other machines"
	if h := c.block.HostsFact(); h != nil {
		remote, ok := c.remoteHost(h.Arg == "url")
		if ok && remote == "" {
			return
		}
		if remote != "" {
			what = remote
		}
	}
	c.floors = append(c.floors, networkLimit(fmt.Sprintf("%s reaches %s", c.key, what), f))
}

// helpOnly reports whether the command only asks for its help or its
// version: one word, --help, -h, --version, -V, help or version.
func (c *call) helpOnly() bool {
	if len(c.rest) == 0 {
		return false
	}
	args := c.rest[strings.Count(c.key, " "):]
	if len(args) != 1 || !args[0].Static {
		return false
	}
	switch args[0].Text {
	case "--help", "-h", "--version", "-V", "help", "version":
		return true
	}
	return false
}

// remoteHost returns the first machine other than this one that the
// command's operands name, "" when every machine they name is this one.
// With url, every operand names a machine (curl example.com); else only
// those spelled as a URL or [user@]host:path. ok is false when what they
// name is not known: a word not known statically, a pattern curl expands,
// a proxy variable set for the command.
func (c *call) remoteHost(url bool) (remote string, ok bool) {
	for _, as := range [][]shellparse.Assign{c.assigns, c.vars} {
		for _, a := range as {
			if strings.Contains(strings.ToLower(a.Name), "proxy") {
				return "", false
			}
		}
	}
	for _, t := range c.toks {
		switch {
		case t.kind == wildTok:
			return "", false
		case t.kind != posTok:
			continue
		}
		host, names := programs.OperandHost(t.text, url)
		if !names {
			continue
		}
		if !programs.Loopback(host) {
			if host == "" {
				host = t.text
			}
			return host, true
		}
	}
	return "", true
}

// unknownNetwork adds the floor of a program the table does not know that
// is given a URL (scheme://host/…) of another machine, as an operand or
// an option's value: what it does there is not known, and nothing on this
// machine confines it. A URL of this machine, or a path, is none.
func (c *call) unknownNetwork() {
	for _, w := range c.rest {
		if !w.Static {
			continue
		}
		t := w.Text
		if strings.HasPrefix(t, "-") {
			_, t, _ = strings.Cut(t, "=")
		}
		if !strings.Contains(t, "://") {
			continue
		}
		if host, names := programs.OperandHost(t, false); names && !programs.Loopback(host) {
			if host == "" {
				host = t
			}
			c.floors = append(c.floors, networkLimit(fmt.Sprintf("%s reaches %s", c.prog, host), nil))
			return
		}
	}
}
