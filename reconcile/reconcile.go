// Package reconcile merges the grants agents-setup manages into the grants a
// config file already holds without losing the ones people added by hand.
//
// With E the grants in the file, Mprev the grants the last run managed and
// T the target, per list (allow, ask, deny):
//
//   - the user's own grants are U = E \ Mprev (per list, so a managed grant
//     the user moved to another list becomes the user's there);
//   - a grant of T in one list is removed from U's other lists;
//   - grants in Mprev but not in T retire (they are not in U, nor in T);
//   - final = U ∪ T, in U's order, then T's new grants in T's order, with
//     duplicates dropped.
//
// A grant of T the user already had in the same list stays the user's: it
// is not recorded as managed, so it survives a later run without it.
package reconcile

import (
	"slices"

	"github.com/agent-shim/agent-shim/internal/config"
)

// Result is the outcome of Merge.
type Result struct {
	// Grants is what the file should hold.
	Grants config.Grants
	// Managed is what this run manages, to be recorded for the next run:
	// T without the grants that were already the user's own in that list.
	Managed config.Grants
	// Added and Removed compare Grants with the file's grants, per list,
	// as sets, in the order of Grants and of the file respectively.
	Added, Removed config.Grants
}

// Changed reports whether Grants differs from existing, order and
// duplicates included.
func (r Result) Changed(existing config.Grants) bool {
	e, g := lists(&existing), lists(&r.Grants)
	for i := range e {
		if !slices.Equal(*e[i], *g[i]) {
			return true
		}
	}
	return false
}

// lists returns pointers to the three lists of g, in the order allow, ask,
// deny.
func lists(g *config.Grants) [3]*[]string {
	return [3]*[]string{&g.Allow, &g.Ask, &g.Deny}
}

// set is a membership test over a list.
type set map[string]bool

func setOf(list []string) set {
	s := make(set, len(list))
	for _, g := range list {
		s[g] = true
	}
	return s
}

// Merge computes the grants the file should hold.
func Merge(existing, prevManaged, target config.Grants) Result {
	var res Result
	e, m, t := lists(&existing), lists(&prevManaged), lists(&target)
	final, managed := lists(&res.Grants), lists(&res.Managed)
	added, removed := lists(&res.Added), lists(&res.Removed)

	var inT [3]set
	for i := range t {
		inT[i] = setOf(*t[i])
	}
	for i := range e {
		prev := setOf(*m[i])
		seen := set{}
		out := []string{}
		for _, g := range *e[i] {
			if prev[g] || seen[g] {
				continue
			}
			if elsewhere(inT, i, g) {
				continue
			}
			seen[g] = true
			out = append(out, g)
		}
		own := []string{}
		for _, g := range *t[i] {
			if seen[g] {
				continue
			}
			seen[g] = true
			out = append(out, g)
			own = append(own, g)
		}
		*final[i] = out
		*managed[i] = own

		before := setOf(*e[i])
		*added[i] = []string{}
		for _, g := range out {
			if !before[g] {
				*added[i] = append(*added[i], g)
			}
		}
		*removed[i] = []string{}
		gone := set{}
		for _, g := range *e[i] {
			if !seen[g] && !gone[g] {
				gone[g] = true
				*removed[i] = append(*removed[i], g)
			}
		}
	}
	return res
}

// elsewhere reports whether g is a target grant of a list other than i.
func elsewhere(inT [3]set, i int, g string) bool {
	for j := range inT {
		if j != i && inT[j][g] {
			return true
		}
	}
	return false
}

// Custom returns the grants of existing that are not managed: the user's
// own, per list.
func Custom(existing, managed config.Grants) config.Grants {
	var res config.Grants
	e, m, c := lists(&existing), lists(&managed), lists(&res)
	for i := range e {
		prev := setOf(*m[i])
		*c[i] = []string{}
		for _, g := range *e[i] {
			if !prev[g] {
				*c[i] = append(*c[i], g)
			}
		}
	}
	return res
}
