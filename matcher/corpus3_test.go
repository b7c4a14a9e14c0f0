package matcher_test

import (
	"testing"
)

// TestAdversarialCorpus3 decides testdata/adversarial-3.tsv as its README
// (../shared/corpus/README.md) says: the adversarial-2 policy, at the
// default level (local-changes), with the working directory inside a git
// checkout, through the gate that every front end uses (see checkoutGate).
// Never weaker than expected; exact unless the row is a floor.
func TestAdversarialCorpus3(t *testing.T) {
	g := checkoutGate(t)
	rows := readGateCorpus(t, "adversarial-3.tsv")
	if len(rows) < 140 {
		t.Fatalf("corpus has only %d rows", len(rows))
	}
	failed := 0
	for _, r := range rows {
		x := g.Explain(r.command)
		if bad := r.holds(x.Decision.Verdict); bad != "" {
			failed++
			t.Errorf("line %d: %q: got %v, want %v (%s; %s; %s)\n%s", r.line, r.command, x.Decision.Verdict, r.want, bad, r.class, r.why, explainGate(x))
		}
	}
	if failed > 0 {
		t.Logf("%d of %d rows fail", failed, len(rows))
	}
}
