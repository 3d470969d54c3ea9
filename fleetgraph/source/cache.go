package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/internal/atomicfile"
)

// The local cache keeps, per bundle content, what a LocalSource's start
// costs most and what follows from the content alone: the bundle's
// identity (its manifest digest, which takes compressing the layer) and
// its validation verdict (which takes decoding every interface spec). The
// key is bundle.Bundle.Content, the digest of the bundle's packed tar: it
// covers exactly the files packed (names, modes, bytes) and is computed
// from the bytes read on every start, so a changed file is never answered
// from the cache, whatever its size or mtime says. Reading and hashing
// the files is a small share of a start; decoding and compressing them is
// most of it.
//
// A file holds one source's current bundles (entries of bundles no longer
// there are dropped on the next write), so it is as large as the fleet:
// about 200 bytes a valid bundle. Its first line names the format, the
// build that wrote it and the SHA-256 of the rest, so a file of another
// build, another format or cut short is ignored as a whole, never read in
// part.
const (
	cacheMagic = "kubepact-local-fleet-cache/v1"
	// maxCacheBytes bounds a cache file read or written: 64 MiB holds
	// 100,000 bundles with findings to spare.
	maxCacheBytes = 64 << 20
	// maxCacheEntries bounds the entries a file may hold.
	maxCacheEntries = 200_000
	// maxCachedFindings bounds an entry's findings (a revision keeps 20).
	maxCachedFindings = 100
)

// cached is what the cache knows of one bundle content.
type cached struct {
	identity digest.Digest
	verdict  *fleetgraph.Verdict
}

// cacheEntry is cached as written.
type cacheEntry struct {
	Content  digest.Digest        `json:"content"`
	Identity digest.Digest        `json:"identity"`
	Valid    bool                 `json:"valid"`
	Findings []fleetgraph.Finding `json:"findings,omitempty"`
}

type cacheBody struct {
	Dir     string       `json:"dir"`
	Entries []cacheEntry `json:"entries"`
}

// cachePath is the file of the source scanning dir, below cacheDir: one
// per directory, named by a hash of its absolute path.
func cachePath(cacheDir, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cacheDir, "local-"+hex.EncodeToString(sum[:16])+".json")
}

// buildKey names the build whose cache files are read: identities and
// verdicts follow from the content and from the code that computed them
// (the compressor, the validator), so a file another build wrote is
// ignored. A release or a clean VCS build is named by its build info; any
// other build (a dirty tree, go run, a test binary) also by its
// executable's size and modification time, so rebuilding after an edit
// voids the cache.
var buildKey = sync.OnceValue(func() string {
	h := sha256.New()
	_, _ = io.WriteString(h, cacheMagic+"\n")
	clean := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		_, _ = io.WriteString(h, bi.String())
		rev, modified := "", true
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		clean = rev != "" && !modified
	}
	if !clean {
		if exe, err := os.Executable(); err == nil {
			if st, err := os.Stat(exe); err == nil {
				fmt.Fprintf(h, "exe %s %d %d\n", exe, st.Size(), st.ModTime().UnixNano())
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
})

// errForeignCache is a cache file another build or format wrote.
var errForeignCache = errors.New("written by another build or format")

// readCache reads the cache file at path for dir. A missing file is an
// empty cache with no error; any other problem is an error saying why,
// and the cache is then empty too.
func readCache(path, dir string) (map[digest.Digest]cached, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > maxCacheBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxCacheBytes>>20)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxCacheBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxCacheBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxCacheBytes>>20)
	}
	head, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok {
		return nil, errors.New("no header line")
	}
	fields := strings.Fields(string(head))
	if len(fields) != 3 || fields[0] != cacheMagic || fields[1] != buildKey() {
		return nil, errForeignCache
	}
	sum := sha256.Sum256(body)
	if fields[2] != hex.EncodeToString(sum[:]) {
		return nil, errors.New("its content does not match its checksum")
	}
	var b cacheBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	if b.Dir != dir {
		return nil, fmt.Errorf("it is the cache of %s", b.Dir)
	}
	if len(b.Entries) > maxCacheEntries {
		return nil, fmt.Errorf("more than %d entries", maxCacheEntries)
	}
	out := make(map[digest.Digest]cached, len(b.Entries))
	for _, e := range b.Entries {
		if e.Content.Validate() != nil || e.Identity.Validate() != nil {
			return nil, fmt.Errorf("entry %q: not a digest", e.Content)
		}
		if len(e.Findings) > maxCachedFindings {
			return nil, fmt.Errorf("entry %s: more than %d findings", e.Content, maxCachedFindings)
		}
		out[e.Content] = cached{identity: e.Identity, verdict: &fleetgraph.Verdict{Valid: e.Valid, Findings: e.Findings}}
	}
	return out, nil
}

// writeCache replaces the cache file at path with entries, atomically. A
// cache past the bounds is not written, and the older file is removed: it
// would stay right (it is keyed by content) but ever more out of date.
func writeCache(path, dir string, entries map[digest.Digest]cached) error {
	if len(entries) > maxCacheEntries {
		_ = os.Remove(path)
		return fmt.Errorf("%d bundles: more than the %d a cache file holds", len(entries), maxCacheEntries)
	}
	b := cacheBody{Dir: dir, Entries: make([]cacheEntry, 0, len(entries))}
	for c, e := range entries {
		b.Entries = append(b.Entries, cacheEntry{Content: c, Identity: e.identity, Valid: e.verdict.Valid, Findings: e.verdict.Findings})
	}
	// sorted, so an unchanged fleet writes the same bytes
	slices.SortFunc(b.Entries, func(x, y cacheEntry) int { return strings.Compare(string(x.Content), string(y.Content)) })
	body, err := json.Marshal(&b)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	head := cacheMagic + " " + buildKey() + " " + hex.EncodeToString(sum[:]) + "\n"
	if len(head)+len(body) > maxCacheBytes {
		_ = os.Remove(path)
		return fmt.Errorf("%d bytes: larger than the %d MiB a cache file holds", len(head)+len(body), maxCacheBytes>>20)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, append([]byte(head), body...), 0o600)
}
