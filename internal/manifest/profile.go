package manifest

import (
	"fmt"
	"strings"
)

// Categories are the manifest categories, in the order agents-setup reports
// them. Each names a file <category>.txt under permissions/.
var Categories = []string{
	"read_only",
	"local_changes",
	"external_changes",
	"device_ops",
	"cache_destruction",
	"batch_execution",
	"never_allow",
}

// Profiles are the profiles agents-setup accepts, from the most to the least
// restrictive. "local-changes" is the default.
var Profiles = []string{"read-only", "local-changes", "external-changes", "full-access"}

// DefaultProfile is the profile used when none was chosen or applied before.
const DefaultProfile = "local-changes"

// profileLists maps each profile to its allow, ask and deny categories.
var profileLists = map[string][3][]string{
	"read-only": {
		{"read_only"},
		{"external_changes", "device_ops", "cache_destruction", "batch_execution"},
		{"never_allow"},
	},
	"local-changes": {
		{"read_only", "local_changes", "device_ops"},
		{"batch_execution", "cache_destruction", "external_changes"},
		{"never_allow"},
	},
	"external-changes": {
		{"read_only", "local_changes", "external_changes", "device_ops"},
		{"batch_execution", "cache_destruction"},
		{"never_allow"},
	},
	"full-access": {
		{"read_only", "local_changes", "external_changes", "device_ops", "cache_destruction", "batch_execution"},
		nil,
		{"never_allow"},
	},
}

// Lists returns the categories whose grants go to the allow, ask and deny
// lists under profile. The read-only profile leaves local_changes out of all
// three lists, as DESIGN.md's table does: those commands fall to the agent's
// default (it asks). The slices are fresh copies.
func Lists(profile string) (allow, ask, deny []string, err error) {
	l, ok := profileLists[profile]
	if !ok {
		return nil, nil, nil, fmt.Errorf("unknown profile %q (profiles: %s)", profile, strings.Join(Profiles, ", "))
	}
	cp := func(s []string) []string { return append([]string{}, s...) }
	return cp(l[0]), cp(l[1]), cp(l[2]), nil
}

// IsCategory reports whether name is one of Categories.
func IsCategory(name string) bool {
	for _, c := range Categories {
		if c == name {
			return true
		}
	}
	return false
}
