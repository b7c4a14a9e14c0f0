package setup

import (
	"bytes"
	"context"
	"testing"
)

// TestRestartWithoutSystemctl checks that a missing systemctl skips the
// restart with a note; PATH holds no systemctl, so nothing is run.
func TestRestartWithoutSystemctl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out bytes.Buffer
	if err := SystemctlRestart(context.Background(), []string{"a.service", "b.service"}, &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "skipped restarting a.service b.service: no systemctl\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
