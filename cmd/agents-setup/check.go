package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agent-shim/agent-shim/internal/manifest"
	"github.com/agent-shim/agent-shim/internal/policycheck"
	"github.com/urfave/cli/v2"
)

// checkFlags are --check, --lint and --json: they read the manifests of the
// checkout, write nothing and take no lock.
var checkFlags = []cli.Flag{
	&cli.BoolFlag{Name: "check", Usage: "run the policy tests (.agents/config/tests.txt of each overlay), under --profile or the profiles each test names; exit 1 on a mismatch"},
	&cli.BoolFlag{Name: "lint", Usage: "report risky, shadowed, duplicate, misspelled and incomplete rules in the manifests; exit 1 on a finding"},
	&cli.BoolFlag{Name: "json", Usage: "with --lint: print the findings as JSON; with --dry-run or --status: the rules with their full grants"},
}

// policyChecks runs --check and --lint on the checkout's manifests.
func policyChecks(c *cli.Context) error {
	for _, f := range []string{"allow", "ask", "deny", "allow-list", "ask-list", "deny-list", "dry-run", "init", "status", "rollback", "reset"} {
		if c.IsSet(f) {
			return usagef("--check and --lint take no --%s", f)
		}
	}
	if p := c.String("profile"); c.IsSet("profile") && !slices.Contains(manifest.Profiles, p) {
		return usagef("unknown profile %q (profiles: %s)", p, strings.Join(manifest.Profiles, ", "))
	}
	if c.Bool("json") && !c.Bool("lint") {
		return usagef("--json goes with --lint")
	}
	root := ""
	if dir := c.String("root"); c.IsSet("root") {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("--root: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("--root %s: not a directory", dir)
		}
		if root, err = filepath.Abs(dir); err != nil {
			return err
		}
	} else if wd, err := os.Getwd(); err == nil {
		root, _ = manifest.FindRoot(wd) // outside a checkout: the built-in defaults
	}
	tree, err := manifest.Load(root)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if c.Bool("check") {
		var only []string
		if c.IsSet("profile") {
			only = []string{c.String("profile")}
		}
		if err := policycheck.Check(w, tree, only...); err != nil {
			return err
		}
	}
	if c.Bool("lint") {
		n, err := policycheck.WriteLint(w, tree, c.Bool("json"))
		if err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d lint findings", n)
		}
	}
	return nil
}
