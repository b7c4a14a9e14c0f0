//go:build !linux

package statefile

import (
	"errors"
	"fmt"
)

// Exchange cannot swap files atomically here: it returns an error
// wrapping errors.ErrUnsupported.
func Exchange(a, b string) error {
	return fmt.Errorf("exchanging %s and %s: %w", a, b, errors.ErrUnsupported)
}

// RenameNoReplace cannot rename atomically without replacing here: it
// returns an error wrapping errors.ErrUnsupported.
func RenameNoReplace(old, new string) error {
	return fmt.Errorf("renaming %s to %s: %w", old, new, errors.ErrUnsupported)
}
