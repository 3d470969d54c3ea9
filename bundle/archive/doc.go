// Package archive owns the byte format of a Pacto bundle layer: a gzip'd tar
// of the bundle's files and their parent directories.
//
// Pack writes that format reproducibly. Entries are sorted, every parent
// directory gets an entry, and every header is normalised (mtime at the Unix
// epoch, no atime or ctime, uid and gid 0, no user or group names, mode 0755
// for directories and 0644 for files, PAX format), and the gzip header carries
// no name and no mtime at a fixed compression level. The same files therefore
// always give the same bytes, which is what makes a bundle's identity (the
// digest of the OCI manifest that references the layer) reproducible.
//
// Extract reads that format treating it as hostile input. It bounds what it
// actually decompresses rather than what headers claim, enforces per-file,
// total and entry-count Limits, and rejects traversal, absolute or otherwise
// unclean paths, links, devices, FIFOs, sparse files, duplicate entries and
// names that are not valid UTF-8. Every error names the offending entry and
// the limit or rule it broke. The result is an immutable in-memory FS.
//
// PackTar, Compress and ExtractTar are the two halves of Pack and Extract,
// for a loader that packs a directory for its identity and reads the files
// back: it packs the tar once, compresses it into Pack's exact bytes, and
// reads the tar it holds under Extract's rules, without decompressing it.
//
// This package depends on the standard library only: it must not import
// other kubepact packages, OCI libraries, MCP or Kubernetes.
package archive
