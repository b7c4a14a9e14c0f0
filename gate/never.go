package gate

import (
	"path"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/programs"
	"github.com/agent-shim/agent-shim/matcher"
	"github.com/agent-shim/agent-shim/shellparse"
)

// blockDevices are globs of device files whose overwriting destroys a disk
// or the running system. `*` in a rule operand is a glob (matcher compares
// it with path.Match), so `dd of=/dev/sd*` covers /dev/sda and /dev/sdb1.
var blockDevices = []string{
	"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*",
	"/dev/disk*", "/dev/rdisk*", "/dev/loop*", "/dev/md*", "/dev/dm-*", "/dev/mapper/*",
	"/dev/disk/*/*", "/dev/mem", "/dev/kmem", "/dev/port",
}

// NeverAllow returns the built-in never-allow list: commands that destroy
// a system, a disk, a home directory, published history or uncommitted
// work. It is a copy: the list cannot be changed from outside. It holds in every mode, yolo included, whatever the policy and the
// person's earlier answers say. Each line is a matcher rule, so its
// variants are caught too (`rm -fr //`, `sudo env rm -rf /`,
// `bash -c 'git push -f'`, `git -C x push origin +main`).
//
// Beyond these rules the gate also refuses a shell write redirection to a
// block device (`> /dev/sda`) and a function that calls itself (the fork
// bomb `:(){ :|:& };:`), and a file tool's write to a block device, which
// no command rule can express.
func NeverAllow() []string { return slices.Clone(neverLines) }

var neverLines = neverAllowLines()

func neverAllowLines() []string {
	lines := []string{
		// The root file system and the home directory. `rm -r` needs
		// no -f to destroy; the flag set of a rule is a minimum, so
		// `rm -r /` covers -rf, -fr, -Rf, --recursive --force and
		// --no-preserve-root, and `/` covers `//`, `/tmp/..` and `/*`.
		"rm -r /",
		"rm -r ~",
		"chmod -R /",
		"chown -R /",
		"chgrp -R /",
		"find / -delete",
		// Published history.
		"git push --force",
		"git push --force-with-lease",
		"git push --mirror",
		// Uncommitted work.
		"git reset --hard",
		"git clean -fd",
		"git clean -fx",
		"git clean -fX",
		// File systems and disks.
		"mkfs",
		"mke2fs",
		"mkswap",
		"mkdosfs",
		"mkntfs",
		"wipefs -a",
		"wipefs --all",
		// The running system.
		"shutdown",
		"reboot",
		"halt",
		"poweroff",
		"init 0",
		"init 6",
		"telinit 0",
		"telinit 6",
		"systemctl poweroff",
		"systemctl reboot",
		"systemctl halt",
		"systemctl kexec",
	}
	// The matcher indexes rules by program name, which holds no glob:
	// list mkfs's helpers one by one.
	for _, fs := range []string{"ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "fat", "msdos",
		"exfat", "ntfs", "f2fs", "minix", "bfs", "cramfs", "jfs", "reiserfs", "hfsplus", "udf"} {
		lines = append(lines, "mkfs."+fs)
	}
	for _, dev := range blockDevices {
		lines = append(lines, "dd of="+dev, "shred "+dev, "tee "+dev)
	}
	return lines
}

// device returns p when it names a block device of blockDevices, else "".
func device(p string) string {
	for _, dev := range blockDevices {
		if ok, _ := path.Match(dev, path.Clean(p)); ok {
			return p
		}
	}
	return ""
}

// namesDevice reports whether any word may name a device or a trigger
// (it holds /dev/ or /proc/): only then are a program's write targets
// worth reading from the table.
func namesDevice(words []string) bool {
	for _, w := range words {
		if strings.Contains(w, "/dev/") || strings.Contains(w, "/proc/") {
			return true
		}
	}
	return false
}

// kernelTrigger reports whether writing p acts on the running kernel as
// the never-allow list's commands do: /proc/sysrq-trigger reboots, halts
// or crashes the machine at once.
func kernelTrigger(p string) bool {
	return path.Clean(p) == "/proc/sysrq-trigger"
}

// neverSource is the source of the never-allow rules, and of no other.
var neverSource = matcher.Source{Category: "never_allow", Overlay: "builtin"}

// isNever reports whether r is one of the never-allow rules.
func isNever(r *matcher.Rule) bool {
	return r != nil && r.Decision == matcher.Deny && r.Source == neverSource
}

// withNever returns a policy of p's rules and the never-allow rules, so
// that one match per command decides both. The rules come from this
// binary, whatever p was read from; held says p holds them already (a
// compact copy joined to the binary's sections of them, see neverStore).
func withNever(p *matcher.Policy, own, held bool) *matcher.Policy {
	out := matcher.New()
	switch {
	case p != nil && own:
		out = p // Load's own policy: no copy of thousands of rules
	case p != nil:
		out = p.Clone()
	}
	if !held || p == nil {
		addNever(out)
	}
	return out
}

// addNever adds the never-allow rules to p.
func addNever(p *matcher.Policy) { p.AddLines(matcher.Deny, neverLines, neverSource) }

// neverShape returns why cmd is never allowed for what no command rule
// can express: a write redirection to a block device, a function that
// calls itself. "" when neither.
func neverShape(cmd *shellparse.Command, argv []string, tbl *programs.Table) string {
	for _, r := range cmd.Redirs {
		if r.Kind != shellparse.Write || !r.Target.Static {
			continue
		}
		if device(r.Target.Text) != "" {
			return "never allowed: overwrites the device " + r.Target.Text
		}
		if kernelTrigger(r.Target.Text) {
			return "never allowed: writes " + r.Target.Text + ", which reboots, halts or crashes the running system"
		}
	}
	// What a program's options write (go build -o, dd of=, cp's
	// destination), onto a device or a trigger.
	if len(argv) > 0 && namesDevice(argv[1:]) {
		paths, _ := tbl.WriteTargets(argv)
		for _, p := range paths {
			if device(p) != "" {
				return "never allowed: " + argv[0] + " overwrites the device " + p
			}
			if kernelTrigger(p) {
				return "never allowed: " + argv[0] + " writes " + p + ", which reboots, halts or crashes the running system"
			}
		}
	}
	if name := cmd.Name(); name != "" {
		for _, f := range cmd.Nesting {
			if f.Kind == "function "+name {
				return "never allowed: function " + name + " calls itself (a fork bomb)"
			}
		}
	}
	return ""
}
