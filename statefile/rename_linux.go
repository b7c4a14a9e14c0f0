package statefile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Exchange swaps the files at a and b atomically (renameat2 with
// RENAME_EXCHANGE): each name then holds what the other held. Both must
// exist. Where the system or file system cannot, it returns an error
// wrapping errors.ErrUnsupported and changes nothing.
func Exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		err = fmt.Errorf("%w: %v", errors.ErrUnsupported, err)
	}
	if err != nil {
		return fmt.Errorf("exchanging %s and %s: %w", a, b, err)
	}
	return nil
}

// RenameNoReplace renames old to new unless new exists, atomically
// (renameat2 with RENAME_NOREPLACE): an existing new is an error wrapping
// fs.ErrExist. Where the system cannot, it returns an error wrapping
// errors.ErrUnsupported and changes nothing.
func RenameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		err = fmt.Errorf("%w: %v", errors.ErrUnsupported, err)
	}
	if err != nil {
		return fmt.Errorf("renaming %s to %s: %w", old, new, err)
	}
	return nil
}
