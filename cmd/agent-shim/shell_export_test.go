package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-shim/agent-shim/internal/supervisor"
	"github.com/agent-shim/agent-shim/internal/telemetry"
)

// TestShellKicksExport: shell mode starts the decision export as the hook
// does, after the line has run (or been refused): the kick leaves its
// stamp beside the decision log. With OTEL_SDK_DISABLED=true the kick
// does nothing at all, which shows the stamp is the kick's.
func TestShellKicksExport(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		disabled   bool
		code       int
	}{
		{"allowed", "git status", false, 0},
		{"refused", "rm -rf /", false, exitDenied},
		{"export disabled", "git status", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := testEnv(t, shellConfig)
			fake := filepath.Join(dir, "fakesh")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("AGENT_SHIM_SHELL", fake)
			if tc.disabled {
				t.Setenv("OTEL_SDK_DISABLED", "true")
			}
			stamp := filepath.Join(dir, "xdg", "state", "agent-shim", telemetry.StampName)
			s := useSeams(t, nil)
			ran, stampBefore := false, false
			superviseRun = func(_ context.Context, c supervisor.Config) (supervisor.Status, error) {
				ran = true
				_, err := os.Stat(stamp)
				stampBefore = err == nil
				return supervisor.Status{}, execShell(c.Path, c.Argv, c.Env)
			}
			var stderr strings.Builder
			if code := run(context.Background(), []string{"agent-shim", "-c", tc.line}, strings.NewReader(""), io.Discard, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr.String())
			}
			t.Logf("ran %v, execs %q, stderr %q", ran, s.execs, stderr.String())
			if stampBefore {
				t.Error("the export was kicked before the line ran")
			}
			_, err := os.Stat(stamp)
			if kicked := err == nil; kicked == tc.disabled {
				t.Errorf("stamp after the call: %v (err %v); want kicked %v", kicked, err, !tc.disabled)
			}
		})
	}
}

// TestRunKicksExport: agent-shim run starts the decision export itself,
// before the program and after it (its tree's hooks cannot write the
// state directory, so they cannot start it).
func TestRunKicksExport(t *testing.T) {
	dir, _ := testEnv(t, shellConfig)
	stamp := filepath.Join(dir, "xdg", "state", "agent-shim", telemetry.StampName)
	useSeams(t, nil)
	stampDuring := false
	superviseRun = func(_ context.Context, c supervisor.Config) (supervisor.Status, error) {
		_, err := os.Stat(stamp)
		stampDuring = err == nil
		os.Remove(stamp)
		return supervisor.Status{}, nil
	}
	var stderr strings.Builder
	if code := run(context.Background(), []string{"agent-shim", "run", "--", "true"}, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !stampDuring {
		t.Error("the export was not started before the program")
	}
	if _, err := os.Stat(stamp); err != nil {
		t.Errorf("the export was not started after the program: %v", err)
	}
}
