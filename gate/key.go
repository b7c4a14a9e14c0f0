package gate

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Key returns the per-user key that authenticates what the shim keeps
// where an agent could write it (the compact policy copy, session answer
// files): keySize random bytes in the file at path, created (0600, in a
// 0700 directory) on first use. A key file that is not a regular file of
// keySize bytes only its owner can read and write is an error: what it
// would authenticate is then not trusted.
func Key(path string) ([]byte, error) { return cacheKey(path) }

// keySize is the length of the cache key.
const keySize = 32

// cacheKey returns the key that authenticates compact copies, creating it
// (random, 0600, in a 0700 directory) on first use. A key file that is
// not a regular file of keySize bytes that only its owner can read and
// write is not used: the cache is then skipped, never trusted.
func cacheKey(path string) ([]byte, error) {
	f, err := openRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newCacheKey(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() != keySize {
		return nil, fmt.Errorf("cache key %s: not a %d-byte file only its owner can read", path, keySize)
	}
	key := make([]byte, keySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("reading cache key %s: %w", path, err)
	}
	return key, nil
}

func newCacheKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Written under another name and linked into place: a reader never
	// sees a short key, and of two first uses at once one key wins.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cache-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(key)
	serr := tmp.Sync()
	if cerr := tmp.Close(); werr != nil || serr != nil || cerr != nil {
		return nil, errors.Join(werr, serr, cerr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return cacheKey(path)
		}
		return nil, err
	}
	return key, nil
}
