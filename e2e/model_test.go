//go:build e2e

package e2e

import (
	"testing"

	"github.com/agent-shim/agent-shim/internal/modelserver"
)

// The scripted model server (package modelserver, which agent-shim verify
// ships too) stands in for each agent's model API on 127.0.0.1.
type (
	modelServer = modelserver.Server
	toolCall    = modelserver.Call
)

// newModelServer starts a model server that makes calls, stopped when the
// test ends.
func newModelServer(t testing.TB, calls ...toolCall) *modelServer {
	t.Helper()
	m, err := modelserver.Start(calls...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
