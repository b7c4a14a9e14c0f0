package matcher

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/shellparse"
)

// probe is a policy and a command line that decide differently with and
// without one fact of the program table.
type probe struct {
	rules []string // "allow K", "deny K", "ask K"
	line  string
}

// probes returns, for one spelling of a fact, the probes any of which
// must change the decision when the fact is removed.
func probes(f *programs.Fact, arg string) []probe {
	k := f.Key
	opt, prefix, hasPrefix := strings.Cut(arg, "@")
	val := "/tmp/probe"
	if hasPrefix {
		if c, ok := strings.CutPrefix(prefix, "*"); ok {
			val = c + "=/tmp/probe"
		} else {
			val = prefix + "/tmp/probe"
		}
	}
	withValue := func(v string) string {
		if strings.HasPrefix(opt, "--") {
			return opt + "=" + quote(v)
		}
		return opt + " " + quote(v)
	}
	single := len(opt) > 2 && opt[1] != '-'
	zz := "--zz-probe"
	if single {
		zz = "-zz-probe"
	}
	deny := "deny rm -rf /"
	switch f.Kind {
	case programs.Alias:
		var out []probe
		for _, other := range f.Args {
			if other != arg {
				out = append(out, probe{[]string{"deny " + k + " " + other}, k + " " + arg})
			}
		}
		return out
	case programs.Value:
		return []probe{
			{[]string{"ask " + k + " " + zz}, k + " " + opt + " " + zz},
			{nil, k + " " + opt + " v a -i b"}, // WriteTargets: v is no operand
		}
	case programs.Optional:
		return []probe{
			{[]string{"ask " + k + " -Y"}, k + " " + opt + "Y"},
			{[]string{"allow " + k, deny}, k + " " + opt + " 'rm -rf /'"},
			{[]string{"ask " + k + " " + zz}, k + " " + opt + " " + zz}, // not consumed
		}
	case programs.Exec:
		switch opt {
		case "+!", "+|":
			return []probe{{[]string{"allow " + k}, k + " '" + opt + "m/tmp/probe'"}}
		}
		if strings.HasSuffix(opt, "=") && !strings.HasPrefix(opt, "-") {
			return []probe{{[]string{"allow " + k}, k + " " + opt + "/tmp/probe"}}
		}
		return []probe{
			{[]string{"allow " + k}, k + " " + withValue(val)},
			{[]string{"allow " + k, deny}, k + " " + withValue(strings.TrimSuffix(val, "/tmp/probe")+"rm -rf /")},
		}
	case programs.Runs, programs.Write, programs.Output, programs.Inline, programs.Code:
		if strings.HasSuffix(opt, "=") && !strings.HasPrefix(opt, "-") {
			return []probe{{[]string{"allow " + k}, k + " " + opt + "/tmp/probe"}}
		}
		return []probe{
			{[]string{"allow " + k}, k + " " + withValue(val)},
			{[]string{"allow " + k}, k + " " + withValue(val) + " 1"},      // a harmless program for awk
			{[]string{"allow " + k}, k + " " + withValue(val) + " h true"}, // a host and a command for ssh
		}
	case programs.Ask:
		return []probe{{[]string{"allow " + k}, k + " " + opt}}
	case programs.Ex:
		if opt == "+" {
			return []probe{{[]string{"allow " + k, deny}, k + " '+!rm -rf /' f"}}
		}
		return []probe{{[]string{"allow " + k, deny}, k + " " + withValue("!rm -rf /") + " f"}}
	case programs.Downloads:
		return []probe{{[]string{"allow " + k}, k + " " + opt + " pkg"}}
	case programs.Runner:
		return []probe{{[]string{"allow " + k, deny}, k + " rm -rf /"}}
	case programs.Network:
		if opt != "" {
			// The option alone sends it elsewhere than its operand, this
			// machine, says.
			return []probe{{[]string{}, k + " " + opt + " localhost"}}
		}
		return []probe{
			{[]string{}, k + " https://example.com/x"},
			{[]string{"allow true"}, k + " example.com true"},
			{[]string{}, k + " -connect example.com:443"},
			{[]string{}, k + " example.com:x /dev/null"}, // scp, rsync
		}
	case programs.Hosts:
		// This machine, or a local path: no other machine reached.
		return []probe{
			{[]string{}, k + " http://localhost:8080/x"},
			{[]string{}, k + " ./a /dev/null"},
		}
	case programs.Writes:
		if hasPrefix {
			return []probe{{[]string{"allow " + k}, k + " " + withValue(strings.TrimSuffix(val, "/tmp/probe")) + " 1 f"}}
		}
		return []probe{{[]string{"allow " + k}, k + " " + opt + " x"}}
	case programs.SingleDash:
		return []probe{{[]string{"deny " + k + " -Y"}, k + " -YZ"}}
	case programs.Bundled:
		return []probe{{[]string{"deny " + k + " -Y"}, k + " Y"}}
	case programs.GlobalValue:
		return []probe{{[]string{"deny " + k + " zzsub"}, k + " " + opt + " user.name=x zzsub"}}
	case programs.GlobalFlag:
		return []probe{{[]string{"allow " + k + " zzsub"}, k + " " + opt + " zzsub"}}
	case programs.EnvExec:
		name := strings.ReplaceAll(arg, "*", "X")
		return []probe{{[]string{"allow " + k, deny}, name + "='rm -rf /' " + k}}
	case programs.EnvArgs:
		opts := map[string]string{"tar": "--to-command='rm -rf /'", "man": "-P 'rm -rf /'", "zip": "-TT 'rm -rf /'"}[f.Program()]
		if opts == "" {
			opts = "'X!=rm -rf /'" // make
		}
		return []probe{{[]string{"allow " + k, deny}, arg + "=" + quote(opts) + " " + k + " x"}}
	case programs.EnvRuns:
		return []probe{{[]string{"allow " + k}, strings.ReplaceAll(arg, "*", "X") + "=/tmp/probe " + k}}
	case programs.Reads:
		return []probe{{[]string{"allow " + k}, "cp a " + strings.ReplaceAll(arg, "*", "x") + " && " + k}}
	case programs.Like:
		return []probe{{[]string{"deny " + strings.Join(f.Args, " ") + " " + zz}, k + " " + zz}}
	case programs.AssignRuns:
		return []probe{{[]string{"allow " + k}, k + " " + arg + "=/tmp/probe"}}
	case programs.AssignExpands:
		return []probe{{[]string{"allow " + k}, k + " X='$(shell /tmp/probe)'"}}
	case programs.ConfigExec:
		key := strings.ReplaceAll(arg, "*", "x")
		value := "rm -rf /"
		if strings.Contains(key, "credential") || strings.HasPrefix(key, "submodule.") {
			value = "!" + value // a helper without ! is git credential-VALUE
		}
		return []probe{{[]string{"allow " + k + " zzsub", deny}, k + " -c " + quote(key+"="+value) + " zzsub"}}
	case programs.ConfigSafe:
		key := strings.ReplaceAll(arg, "*", "x")
		return []probe{{[]string{"allow " + k + " zzsub"}, k + " -c " + key + "=x zzsub"}}
	case programs.Help:
		return []probe{{[]string{"allow " + k + " help"}, k + " --help"}}
	case programs.Script:
		script := map[string]string{"sed": "'s/x/y/w /tmp/probe'", "awk": `'BEGIN { system("/tmp/probe") }'`}[f.Arg]
		return []probe{{[]string{"allow " + k}, k + " " + script}}
	}
	return nil
}

// writeTargets is the probe's WriteTargets under tbl, as one string.
func writeTargets(tbl *programs.Table, line string) string {
	s, err := shellparse.Parse(line)
	if err != nil || len(s.Commands) == 0 {
		return "unparsed"
	}
	paths, unknown := tbl.WriteTargets(s.Commands[0].Argv())
	return fmt.Sprint(paths, unknown)
}

func decideWith(tbl *programs.Table, pr probe) Decision {
	p := New()
	p.SetPrograms(tbl)
	for _, r := range pr.rules {
		d, line, _ := strings.Cut(r, " ")
		dec, _ := ParseDecision(d)
		p.Add(dec, line, Source{})
	}
	return decideLocal(p, pr.line).Decision
}

// TestEveryFactChangesADecision proves each fact of the built-in table,
// spelling by spelling, is reachable: some command decides differently
// with the fact and without it, or has other WriteTargets (what the gate
// protects paths with).
func TestEveryFactChangesADecision(t *testing.T) {
	full := programs.Builtin()
	for _, f := range full.Facts() {
		without := full.Without(f)
		if f.Kind == programs.Targets {
			line := strings.Fields(f.Key + " a b c")
			p1, u1 := full.WriteTargets(line)
			p2, u2 := without.WriteTargets(line)
			if slices.Equal(p1, p2) && u1 == u2 {
				t.Errorf("%s: WriteTargets(%q) is the same without it", f, line)
			}
			continue
		}
		args := f.Args
		if len(args) == 0 {
			args = []string{""}
		}
		for _, a := range args {
			prs := probes(f, a)
			if len(prs) == 0 {
				t.Errorf("%s: no probe for %s facts", f, f.Kind)
				continue
			}
			changed := false
			var tried []string
			for _, pr := range prs {
				if wt, wwo := writeTargets(full, pr.line), writeTargets(without, pr.line); wt != wwo {
					changed = true
					break
				}
				if pr.rules == nil {
					continue
				}
				with, wo := decideWith(full, pr), decideWith(without, pr)
				if with != wo {
					changed = true
					if with.rank() < wo.rank() && f.Kind != programs.Value && f.Kind != programs.Optional && f.Kind != programs.ConfigSafe && f.Kind != programs.Help && f.Kind != programs.Hosts && f.Kind != programs.GlobalFlag && f.Kind != programs.GlobalValue && f.Kind != programs.SingleDash {
						t.Errorf("%s (%s): %q under %q is %v with the fact, %v without: a fact of this kind may only make a decision stricter", f, a, pr.line, pr.rules, with, wo)
					}
					break
				}
				tried = append(tried, pr.line+" under "+strings.Join(pr.rules, ", ")+" → "+with.String())
			}
			if !changed {
				t.Errorf("%s: spelling %q changes no decision; tried:\n\t%s", f, a, strings.Join(tried, "\n\t"))
			}
		}
	}
}
