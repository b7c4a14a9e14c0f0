package shellparse

import "strings"

// runners are the programs that run another program given on their command
// line, as data: each entry's spec says which options the runner has (an
// option it does not list makes the command unknown rather than guessed
// at), which operands come before the command, and what else the runner
// does with it (runs it through sh -c, writes a file, changes directory).
//
// A runner is reported as well as the command it runs (keep), so that
// rules about the runner itself still apply: unwrapping only ever adds a
// command to decide. The wrappers unwrapped before this table (env, nice,
// timeout, sudo, …) and zsh's precommand modifiers are replaced by the
// command, as they always were.
var runners = runnerTable{
	{"env", &optSpec{flags: "i0v", valued: "uCSP", assigns: true, dashAlone: true,
		long: longOpts{"ignore-environment", "null", "unset=", "chdir=", "split-string=", "debug",
			"list-signal-handling", "argv0="},
		optLong:   longOpts{"block-signal", "default-signal", "ignore-signal"},
		chdirOpts: optNames{"-C", "--chdir"}}},
	{"command", &optSpec{flags: "p", query: "vV"}},
	{"builtin", &optSpec{}},
	{"exec", &optSpec{flags: "cl", valued: "a"}},
	{"nice", &optSpec{valued: "n", numeric: true, long: longOpts{"adjustment="}}},
	{"nohup", &optSpec{}},
	{"timeout", &optSpec{flags: "v", valued: "sk", operands: 1,
		long: longOpts{"signal=", "kill-after=", "preserve-status", "foreground", "verbose"}}},
	{"time", &optSpec{flags: "apqv", valued: "fo",
		long:      longOpts{"format=", "output=", "append", "portability", "verbose", "quiet"},
		writeOpts: optNames{"-o", "--output"}}},
	{"stdbuf", &optSpec{valued: "ioe", long: longOpts{"input=", "output=", "error="}}},
	{"sudo", &optSpec{flags: "AbEHiknPSsB", valued: "CDghpRrTtUu", query: "elVvK", assigns: true,
		long: longOpts{"askpass", "background", "bell", "close-from=", "chdir=", "preserve-env",
			"edit", "group=", "set-home", "host=", "login", "remove-timestamp", "reset-timestamp",
			"list", "non-interactive", "preserve-groups", "prompt=", "chroot=", "role=", "stdin",
			"shell", "type=", "command-timeout=", "other-user=", "user=", "version", "validate"},
		optLong:   longOpts{"preserve-env"},
		chdirOpts: optNames{"-D", "--chdir"}}},
	{"doas", &optSpec{flags: "Lns", valued: "Cu"}},
	{"ionice", &optSpec{flags: "t", valued: "cn", query: "pPu", long: longOpts{"class=", "classdata=", "ignore", "pid", "pgid", "uid"}}},
	{"setsid", &optSpec{flags: "cfw", long: longOpts{"ctty", "fork", "wait"}}},
	{"busybox", &optSpec{}},
	{"noglob", &optSpec{}}, // zsh precommand modifiers
	{"nocorrect", &optSpec{}},
	{"repeat", &optSpec{operands: 1}}, // zsh: repeat N cmd
	{"toybox", &optSpec{}},
	{"xargs", &optSpec{flags: "0prtxo", valued: "aEdILnPs", optional: "eil",
		long: longOpts{"null", "arg-file=", "delimiter=", "max-args=", "max-procs=", "interactive",
			"process-slot-var=", "no-run-if-empty", "max-chars=", "show-limits", "verbose", "exit",
			"open-tty"},
		optLong: longOpts{"eof", "replace", "max-lines"}}},

	// Wrappers that only change how the command runs.
	{"unbuffer", &optSpec{keep: true, flags: "p"}},
	{"catchsegv", &optSpec{keep: true}},
	{"eatmydata", &optSpec{keep: true}},
	{"caffeinate", &optSpec{keep: true, flags: "dimsu", valued: "tw"}},
	{"taskset", &optSpec{keep: true, flags: "ac", query: "p", operands: 1,
		long: longOpts{"all-tasks", "cpu-list", "pid", "help", "version"}}},
	{"chrt", &optSpec{keep: true, flags: "abdfiorRv", valued: "TPD", query: "pm", operands: 1,
		long: longOpts{"all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork",
			"verbose", "sched-runtime=", "sched-period=", "sched-deadline=", "pid", "max"}}},
	{"prlimit", &optSpec{keep: true, valued: "o", optional: "cdefilmnqrstuvxy", query: "p",
		long: longOpts{"pid=", "output=", "noheadings", "raw", "verbose"},
		optLong: longOpts{"core", "data", "nice", "fsize", "sigpending", "memlock", "rss", "nofile",
			"msgqueue", "rtprio", "stack", "cpu", "nproc", "as", "locks", "rttime"}}},
	{"cgexec", &optSpec{keep: true, valued: "g", long: longOpts{"sticky"}}},
	{"numactl", &optSpec{keep: true, flags: "la", valued: "iNmCpbP", query: "sH",
		long: longOpts{"interleave=", "cpunodebind=", "membind=", "physcpubind=", "localalloc",
			"preferred=", "preferred-many=", "balancing", "all", "show", "hardware"}}},
	{"faketime", &optSpec{keep: true, flags: "mf", valued: "p", operands: 1,
		long: longOpts{"exclude-monotonic", "date-prog="}}},
	{"torsocks", &optSpec{keep: true, flags: "idq", valued: "upaP", long: longOpts{"user=", "pass=", "address=", "port=",
		"isolate", "debug", "quiet", "version", "shell"},
		noCmd: "an interactive shell"}},
	{"proxychains", &optSpec{keep: true, flags: "q", valued: "f"}},
	{"proxychains4", &optSpec{keep: true, flags: "q", valued: "f"}},
	{"xvfb-run", &optSpec{keep: true, flags: "alh", valued: "defnpsw",
		long: longOpts{"auto-servernum", "error-file=", "auth-file=", "help", "server-num=", "listen-tcp",
			"xauth-protocol=", "server-args=", "wait=", "auto-display"},
		writeOpts: optNames{"-e", "--error-file", "-f", "--auth-file"}}},
	{"dbus-run-session", &optSpec{keep: true, long: longOpts{"config-file=", "dbus-daemon="}, progOpts: optNames{"--dbus-daemon"}}},
	{"valgrind", &optSpec{keep: true, flags: "hqvd", anyLong: true, progOpts: optNames{"--db-command"}}},
	{"fakeroot", &optSpec{keep: true, flags: "uhv", valued: "lsib", long: longOpts{"lib=", "faked=", "unknown-is-real", "version", "help"},
		progOpts: optNames{"--faked"}, writeOpts: optNames{"-s"}}},

	// Personality, CPU and terminal wrappers: the command runs as it is.
	{"setarch", &optSpec{keep: true, flags: "vRFZLXBIT3S", operands: 1,
		long: longOpts{"verbose", "addr-no-randomize", "fdpic-funcptrs", "mmap-page-zero",
			"addr-compat-layout", "read-implies-exec", "32bit", "short-inode", "whole-seconds",
			"sticky-timeouts", "3gb", "4gb", "uname-2.6", "list", "show="}}},
	{"linux32", &optSpec{keep: true, flags: "vRFZLXBIT3S", long: longOpts{"verbose", "addr-no-randomize", "uname-2.6", "3gb", "4gb"}}},
	{"linux64", &optSpec{keep: true, flags: "vRFZLXBIT3S", long: longOpts{"verbose", "addr-no-randomize", "uname-2.6", "3gb", "4gb"}}},
	{"cpulimit", &optSpec{keep: true, flags: "fqkrvzib", valued: "lpPem",
		long: longOpts{"limit=", "pid=", "exe=", "path=", "cpu=", "foreground", "quiet", "kill",
			"restore", "verbose", "lazy", "include-children", "background", "monitor-forks", "help"}}},
	// rlwrap -z runs a filter program.
	{"rlwrap", &optSpec{keep: true, flags: "cinNhorRUvWIA", valued: "bCDefgHlOPqsStwz", optional: "amMp",
		anyLong: true, progOpts: optNames{"-z", "--filter"}}},
	// sshpass feeds a password to the command it runs.
	{"sshpass", &optSpec{keep: true, flags: "ve", valued: "pfdPh"}},
	// The dynamic loader runs the program it loads (see loaderName);
	// what it preloads or audits runs inside it.
	{"ld.so", &optSpec{keep: true,
		long: longOpts{"list", "verify", "inhibit-cache", "library-path=", "inhibit-rpath=", "audit=",
			"preload=", "argv0=", "glibc-hwcaps-prepend=", "glibc-hwcaps-mask=", "list-tunables",
			"list-diagnostics", "help", "version"},
		progOpts: optNames{"--preload", "--audit", "--library-path"}}},

	// Tracers run the command and write what they saw.
	{"strace", &optSpec{keep: true, flags: "AcCdDfFhiknNqrtTvVwxyzZ", valued: "abeEIoOpPsSuUX", query: "p",
		long: longOpts{"output=", "summary-only", "summary", "follow-forks", "output-separately",
			"trace=", "signal=", "status=", "quiet=", "decode-fds=", "string-limit=", "user=",
			"attach=", "env=", "timestamps=", "absolute-timestamps=", "relative-timestamps=",
			"syscall-times=", "stack-traces", "no-abbrev", "verbose=", "raw=", "columns=",
			"seccomp-bpf", "kill-on-exit", "instruction-pointer", "syscall-number", "trace-path=",
			"inject=", "fault=", "summary-sort-by=", "summary-columns=", "const-print-style=",
			"quiet", "help", "version", "daemonize=", "detach-on="},
		writeOpts: optNames{"-o", "--output"}}},
	{"ltrace", &optSpec{keep: true, flags: "bcCfhiLrStTV", valued: "aAeFnopsuwxlD", query: "p",
		long:      longOpts{"output=", "library=", "demangle", "indent=", "align=", "help", "version", "config="},
		writeOpts: optNames{"-o", "--output"}}},

	// Runners that enter another root, namespace, user or machine: their
	// own rules apply too.
	{"chroot", &optSpec{long: longOpts{"groups=", "userspec=", "skip-chdir", "help", "version"}, operands: 1,
		keep: true, noCmd: "an interactive shell"}},
	{"nsenter", &optSpec{flags: "aeFZ", valued: "tGS", optional: "muinpUCTrw", keep: true,
		long: longOpts{"target=", "all", "uts", "ipc", "net", "pid", "user", "cgroup", "time",
			"setuid=", "setgid=", "preserve-credentials", "no-fork", "follow-context", "env",
			"join-cgroup", "user-parent", "keep-caps"},
		optLong: longOpts{"mount", "root", "wd", "uts", "ipc", "net", "pid", "user", "cgroup", "time"},
		noCmd:   "an interactive shell", chdirOpts: optNames{"-w", "--wd"}}},
	{"unshare", &optSpec{flags: "muinpUCTfrcl", valued: "RwSG", keep: true,
		long: longOpts{"fork", "map-root-user", "map-current-user", "map-auto", "propagation=",
			"setgroups=", "root=", "wd=", "setuid=", "setgid=", "map-user=", "map-group=",
			"map-users=", "map-groups=", "keep-caps", "load-interp=", "monotonic=", "boottime="},
		optLong: longOpts{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "mount-proc",
			"mount-binfmt", "kill-child"},
		noCmd: "an interactive shell", chdirOpts: optNames{"-w", "--wd"}}},
	{"setpriv", &optSpec{query: "d", keep: true,
		long: longOpts{"dump", "nnp", "no-new-privs", "inh-caps=", "ambient-caps=", "bounding-set=",
			"ruid=", "euid=", "rgid=", "egid=", "reuid=", "regid=", "clear-groups", "keep-groups",
			"init-groups", "groups=", "securebits=", "pdeathsig=", "selinux-label=",
			"apparmor-profile=", "landlock-access=", "landlock-rule=", "reset-env"}}},
	{"runcon", &optSpec{flags: "c", valued: "urtl", keep: true,
		long: longOpts{"compute", "user=", "role=", "type=", "range="}}},
	{"firejail", &optSpec{anyLong: true, keep: true, noCmd: "an interactive shell"}},
	{"proot", &optSpec{flags: "0Vh", valued: "rbmwvkiRSq", keep: true,
		long: longOpts{"rootfs=", "bind=", "mount=", "cwd=", "pwd=", "verbose=", "kernel-release=",
			"root-id", "change-id=", "link2symlink", "kill-on-exit", "help", "version", "qemu="},
		progOpts: optNames{"-q", "--qemu"}, noCmd: "an interactive shell", chdirOpts: optNames{"-w", "--cwd", "--pwd"}}},
	{"pkexec", &optSpec{long: longOpts{"user=", "disable-internal-agent", "keep-cwd", "version", "help"}, keep: true,
		noCmd: "an interactive shell"}},
	{"systemd-run", &optSpec{flags: "rtPqGdS", valued: "upEMH", keep: true,
		long: longOpts{"user", "system", "scope", "unit=", "property=", "description=", "slice=",
			"slice-inherit", "remain-after-exit", "send-sighup", "service-type=", "uid=", "gid=",
			"nice=", "working-directory=", "same-dir", "setenv=", "pty", "pipe", "quiet", "wait",
			"collect", "no-block", "on-active=", "on-boot=", "on-startup=", "on-unit-active=",
			"on-unit-inactive=", "on-calendar=", "on-timezone-change", "on-clock-change",
			"timer-property=", "path-property=", "socket-property=", "machine=", "host=",
			"no-ask-password", "expand-environment=", "ignore-failure", "background=", "json=",
			"job-mode=", "shell"},
		chdirOpts: optNames{"--working-directory"}}},
	{"screen", &optSpec{flags: "aAdDfilmOqQrRUvx", valued: "cehpsStT", keep: true,
		noCmd: "an interactive shell"}},
	{"entr", &optSpec{flags: "acdnprsz", keep: true}}, // entr -s: see runArgs
	{"chronic", &optSpec{flags: "ev", keep: true}},
	{"ifne", &optSpec{flags: "n", keep: true}},
	{"gosu", &optSpec{operands: 1, keep: true}},
	{"su-exec", &optSpec{operands: 1, keep: true}},
	{"setuidgid", &optSpec{operands: 1, keep: true}},
	// envdir sets the environment from files nobody can see: PATH among them.
	{"envdir", &optSpec{operands: 1, keep: true}},
	// The command is a compiler run through a cache or on another host.
	{"ccache", &optSpec{keep: true}},
	{"distcc", &optSpec{keep: true}},
	// jiri runp runs its command in every project (see subRunners).
	// watch, ssh, sg, flock, script and parallel need more than a spec:
	// see runnerSpecial.
	{"watch", &optSpec{keep: true, flags: "bcCeEgprtwx", valued: "nqs", optional: "d", join: true,
		long: longOpts{"beep", "color", "no-color", "differences", "errexit", "chgexit", "interval=",
			"precise", "no-title", "no-wrap", "exec", "equexit=", "no-rerun", "shotsfile=", "help",
			"version"},
		optLong: longOpts{"differences"}}},
	{"ssh", &optSpec{flags: "46AaCfGgKkMNnqsTtVvXxY", valued: "BbcDEeFIiJLlmOoPpQRSWw", operands: 1,
		keep: true, join: true, noCmd: "a remote shell reading standard input"}},
	{"flock", &optSpec{flags: "sxenuoFhV", valued: "wE", operands: 1, keep: true,
		long: longOpts{"shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "timeout=",
			"wait=", "conflict-exit-code=", "verbose", "help", "version", "command="},
		scriptOpts: optNames{"-c", "--command"}}},
	{"script", &optSpec{flags: "aefqEh", valued: "cBIOTmo", optional: "t", keep: true,
		long: longOpts{"append", "command=", "echo=", "return", "flush", "force", "log-in=", "log-out=",
			"log-io=", "log-timing=", "logging-format=", "output-limit=", "quiet", "timing", "help", "version"},
		optLong:    longOpts{"timing"},
		scriptOpts: optNames{"-c", "--command"},
		writeOpts:  optNames{"-B", "-I", "-O", "-T", "--log-in", "--log-out", "--log-io", "--log-timing"},
		noCmd:      "an interactive shell"}},
	{"sg", &optSpec{keep: true, join: true, operands: 1, noCmd: "an interactive shell"}},
	// hyperfine runs each operand, and its --setup, --prepare,
	// --conclude and --cleanup commands, through a shell. -P and -L take
	// several values: not listed, so the command is not guessed at.
	// npx runs the named package's program, from the project or fetched
	// from the registry (the matcher asks for a fetch it can see: a
	// version, --package, --yes); -c runs a command line.
	{"npx", &optSpec{keep: true, flags: "yq", valued: "pwc",
		long: longOpts{"yes", "no", "package=", "call=", "workspace=", "workspaces", "ws",
			"include-workspace-root", "quiet", "ignore-scripts", "prefer-offline", "offline"},
		scriptOpts: optNames{"-c", "--call"}}},
	{"hyperfine", &optSpec{keep: true, each: true, flags: "iNhV", valued: "wmMrspcSunD",
		long: longOpts{"warmup=", "min-runs=", "max-runs=", "runs=", "setup=", "prepare=", "conclude=",
			"cleanup=", "shell=", "ignore-failure", "style=", "sort=", "time-unit=", "export-asciidoc=",
			"export-csv=", "export-json=", "export-markdown=", "export-orgmode=", "show-output", "output=",
			"input=", "command-name=", "parameter-step-size=", "help", "version"},
		scriptOpts: optNames{"-s", "--setup", "-p", "--prepare", "--conclude", "-c", "--cleanup"},
		progOpts:   optNames{"-S", "--shell"},
		writeOpts:  optNames{"--export-asciidoc", "--export-csv", "--export-json", "--export-markdown", "--export-orgmode"}}},
}

// runnerTable is a list of runners, not a map: the compiler lays it out,
// where a map literal of this size is built each time the shim starts.
type runnerTable []struct {
	name string
	spec *optSpec
}

// lookup returns the runner of that name.
func (t runnerTable) lookup(name string) (*optSpec, bool) {
	if loaderName(name) {
		name = "ld.so"
	}
	for _, r := range t {
		if r.name == name {
			return r.spec, true
		}
	}
	return nil, false
}

// loaderName reports whether a program name is the dynamic loader, which
// runs the program named by its first operand: ld-linux-x86-64.so.2,
// ld-linux.so.2, ld-linux-aarch64.so.1, ld-musl-x86_64.so.1, ld.so.
func loaderName(name string) bool {
	if name == "ld.so" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "ld-")
	return ok && strings.Contains(rest, ".so")
}

// subRunners are runners behind a subcommand: `jiri runp CMD`. jiri takes
// Go-style flags before and after the subcommand.
var subRunners = map[string]map[string]*optSpec{
	// direnv exec DIR CMD runs CMD with DIR's environment.
	"direnv": {"exec": {operands: 1, keep: true}},
	// Environment managers run the command in an environment of theirs.
	"conda":      {"run": condaRun},
	"mamba":      {"run": condaRun},
	"micromamba": {"run": condaRun},
	"poetry":     {"run": {keep: true}},
	"pipenv":     {"run": {keep: true}},
	"bundle":     {"exec": {keep: true, long: longOpts{"gemfile=", "keep-file-descriptors"}}},
	// perf stat|record|trace|… -- CMD runs CMD and measures it.
	"perf": {
		"stat":   perfSpec,
		"record": perfSpec,
		"trace":  perfSpec,
		"mem":    perfSpec,
		"c2c":    perfSpec,
		"kvm":    perfSpec,
		"sched":  perfSpec,
		"lock":   perfSpec,
		"kmem":   perfSpec,
		"top":    perfSpec,
	},
	"jiri": {
		"runp": {goFlags: true, keep: true,
			long: longOpts{"collate-stdout", "exit-on-error", "has-branch", "has-uncommitted",
				"has-untracked", "interactive", "projects=", "show-key-prefix", "show-name-prefix",
				"uncommitted", "untracked", "branch=", "v", "color=", "j=", "root=",
				"show-progress", "time", "progress-window="}},
	},
}

// condaRun is conda run's options (mamba's and micromamba's too).
var condaRun = &optSpec{keep: true, flags: "v", valued: "np",
	long: longOpts{"name=", "prefix=", "cwd=", "live-stream", "no-capture-output", "debug-wrapper-scripts",
		"verbose", "quiet"},
	chdirOpts: optNames{"--cwd"}}

// perfSpec is perf's measuring subcommands: their long options and the
// short ones that take a value; -o writes the recording.
var perfSpec = &optSpec{keep: true, flags: "aAvnqsSBgTdPiuzRNk", valued: "eptCGIorxMDcFmjUlLy", anyLong: true,
	writeOpts: optNames{"-o"}}

// perfGlobals are perf's own options before the subcommand.
var perfGlobals = &optSpec{flags: "pPvh", long: longOpts{"help", "version", "exec-path", "html-path", "paginate",
	"no-pager", "debugfs-dir=", "buildid-dir=", "list-cmds", "list-opts"}}

// jiriGlobals are jiri's own flags before the subcommand.
var jiriGlobals = &optSpec{goFlags: true,
	long: longOpts{"color=", "j=", "root=", "show-progress", "time", "progress-window=", "v",
		"debug", "q", "quiet", "analytics-opt=", "cpu-profile=", "exit-on-error"}}
