package oci

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/opencontainers/go-digest"

	"github.com/kubepact/kubepact/internal/atomicfile"
)

// cache keeps content by digest under dir/blobs/<algorithm>/<encoded>, the
// layout of an OCI image layout's blobs. Entries are written atomically and
// verified on every read, so a torn or tampered entry is never served. The
// content may come from private registries, so only the owner may read it.
type cache struct {
	dir string
}

func newCache(dir string) (*cache, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("oci: cache: %w", err)
	}
	return &cache{dir: dir}, nil
}

func (c *cache) path(d digest.Digest) string {
	return filepath.Join(c.dir, "blobs", d.Algorithm().String(), d.Encoded())
}

// get returns the entry for d if it exists, is at most max bytes and
// matches d. A mismatching entry is removed, so it is fetched again.
func (c *cache) get(d digest.Digest, max int64) ([]byte, bool) {
	if d.Validate() != nil {
		return nil, false
	}
	f, err := os.Open(c.path(d))
	if err != nil {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	_ = f.Close()
	if err != nil {
		return nil, false
	}
	if int64(len(data)) > max || d.Algorithm().FromBytes(data) != d {
		_ = os.Remove(c.path(d))
		return nil, false
	}
	return data, true
}

// put stores data, already verified to match d, through internal/atomicfile:
// only the owner may read it.
func (c *cache) put(d digest.Digest, data []byte) error {
	target := c.path(d)
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("oci: cache: %w", err)
	}
	if err := atomicfile.Write(target, data, 0o600); err != nil {
		return fmt.Errorf("oci: cache %s: %w", d, err)
	}
	return nil
}
