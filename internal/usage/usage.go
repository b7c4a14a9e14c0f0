// Package usage holds what the commands say about how they are called,
// beyond their own flags: the closest of the words they know to a
// mistyped one, and the version line read from the binary's build
// information.
package usage

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Closest returns the word of known closest to got, when it is close
// enough to be the one meant: at most one edit (an insertion, a deletion,
// a change or two neighbours swapped) for words of up to four letters, two
// for longer ones; a word that got starts (or that starts got) wins too.
// "" when none is.
func Closest(got string, known []string) string {
	if got == "" {
		return ""
	}
	best, bestDist := "", 0
	for _, k := range known {
		if k == "" || k == got {
			continue
		}
		d := distance(got, k)
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if d > limit && !(len(got) >= 3 && strings.HasPrefix(k, got)) {
			continue
		}
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// distance is the optimal string alignment distance of a and b: the
// edits of Levenshtein's distance and the swap of two neighbours, each
// counting one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: two back for a swap.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Version is the line --version prints for program: the module's
// version and the commit it was built from, as the go command recorded
// them in the binary (debug.ReadBuildInfo).
func Version(program string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return program + " (no build information)"
	}
	return versionLine(program, bi)
}

func versionLine(program string, bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var more []string
	if rev != "" {
		c := "commit " + rev
		if modified {
			c += " with local changes"
		}
		more = append(more, c)
	}
	if when != "" {
		more = append(more, when)
	}
	if bi.GoVersion != "" {
		more = append(more, bi.GoVersion)
	}
	if len(more) == 0 {
		return fmt.Sprintf("%s %s", program, v)
	}
	return fmt.Sprintf("%s %s (%s)", program, v, strings.Join(more, ", "))
}
