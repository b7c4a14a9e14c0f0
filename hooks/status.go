package hooks

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
)

// Status reports, for every repository of opts.Repos, the state of each
// event's hook, for the method the installed git uses.
func Status(ctx context.Context, opts Options) ([]Report, error) {
	repos, err := inspectAll(ctx, opts)
	if err != nil {
		return nil, err
	}
	rec, err := readRecord(opts.StateDir)
	if err != nil {
		return nil, err
	}
	command := CommandLine(opts.Command)
	var reports []Report
	for _, r := range repos {
		_, recorded := rec.Repos[r.dir]
		var rep Report
		if r.method == Config {
			rep, err = configStatus(ctx, r, command, recorded)
		} else {
			rep, err = scriptStatus(r, command, recorded)
		}
		if err != nil {
			return nil, err
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

func scriptStatus(r repo, command string, recorded bool) (Report, error) {
	rep := Report{Repo: r.dir, Method: Script, HooksDir: r.hooksDir}
	for _, event := range hookEvents {
		path := filepath.Join(r.hooksDir, event)
		orig := path + origSuffix
		h := HookReport{Event: event, Path: path}
		origExists, err := exists(orig)
		if err != nil {
			return rep, err
		}
		have, err := readHook(path)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return rep, err
		case err == nil && isOurs(have):
			switch {
			case !bytes.Equal(have, script(event, command)):
				h.State, h.Detail = Stale, "an outdated script or command; run agents-setup hooks install"
			case !isExecutable(path):
				h.State, h.Detail = Stale, "not executable, so git skips it; run agents-setup hooks install"
			case origExists:
				h.State, h.Detail = Chained, "runs "+orig+" first"
			default:
				h.State = Installed
			}
		case recorded || origExists:
			h.State = Removed
			if err == nil {
				h.Detail = "replaced by a hook that is not agents-setup's (a jiri update?)"
			} else {
				h.Detail = "deleted (a jiri update?)"
			}
			if origExists {
				h.Detail += "; the hook it replaced is still at " + orig
			}
			h.Detail += "; run agents-setup hooks install"
		default:
			h.State = Missing
			if err == nil {
				h.Detail = "a hook that is not agents-setup's is there; install chains it"
			}
		}
		if h.State == Missing && r.foreign() {
			h.Detail = join(h.Detail, "core.hooksPath is shared ("+r.hooksDir+"); install needs --force")
		}
		rep.Hooks = append(rep.Hooks, h)
	}
	return rep, nil
}

func configStatus(ctx context.Context, r repo, command string, recorded bool) (Report, error) {
	rep := Report{Repo: r.dir, Method: Config, HooksDir: r.hooksDir}
	commands, events, err := configState(ctx, r)
	if err != nil {
		return rep, err
	}
	for _, event := range hookEvents {
		h := HookReport{Event: event, Path: keyEvent}
		switch {
		case slices.Equal(commands, []string{command}) && slices.Contains(events, event):
			h.State = Installed
		case len(commands)+len(events) > 0:
			h.State, h.Detail = Stale, "hook."+hookName+" has an outdated command or events; run agents-setup hooks install"
		case recorded:
			h.State, h.Detail = Removed, "hook."+hookName+" was removed from the configuration; run agents-setup hooks install"
		default:
			h.State = Missing
		}
		have, err := readHook(filepath.Join(r.hooksDir, event))
		if err == nil && isOurs(have) {
			h.State = Stale
			h.Detail = join(h.Detail, "a script hook left from older git would run too; run agents-setup hooks install")
		}
		rep.Hooks = append(rep.Hooks, h)
	}
	return rep, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
