package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"
)

// Limits bound what Extract accepts. A zero or negative field means the
// matching field of DefaultLimits; there is no "unlimited".
type Limits struct {
	// MaxFileBytes is the largest regular file, in bytes.
	MaxFileBytes int64
	// MaxTotalBytes bounds the sum of all regular files, in bytes.
	MaxTotalBytes int64
	// MaxEntries bounds the number of tar headers of any kind.
	MaxEntries int
}

// DefaultLimits are Pacto's extraction limits: 10 MiB per file, 50 MiB in
// total and 10,000 entries.
var DefaultLimits = Limits{MaxFileBytes: 10 << 20, MaxTotalBytes: 50 << 20, MaxEntries: 10000}

const (
	// entryOverhead is the tar framing allowed per entry on top of file
	// contents: a header block, a PAX header block with its records, and the
	// padding of the entry's data to a block boundary.
	entryOverhead = 2 << 10
	// streamSlack covers the end-of-archive blocks, record padding and a
	// global header.
	streamSlack = 1 << 20
	// maxNameBytes bounds an entry's path.
	maxNameBytes = 4096
)

// WithDefaults returns l with every zero or negative field replaced by the
// matching field of DefaultLimits.
func (l Limits) WithDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultLimits.MaxTotalBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultLimits.MaxEntries
	}
	return l
}

// StreamBytes is the most bytes Extract reads from the decompressed tar
// stream under l: the total file limit plus the framing the entry limit
// allows. It is also a safe upper bound for the compressed layer, which a
// caller fetching a layer may cap before handing it to Extract.
func (l Limits) StreamBytes() int64 {
	l = l.WithDefaults()
	return l.MaxTotalBytes + int64(l.MaxEntries)*entryOverhead + streamSlack
}

// The limits an *Error with Kind ErrLimit names, one per field of Limits.
const (
	LimitFile    = "file"    // MaxFileBytes
	LimitTotal   = "total"   // MaxTotalBytes
	LimitEntries = "entries" // MaxEntries
)

// Errors returned by Extract wrap one of these kinds, so callers can tell a
// hostile or oversized archive from a broken one with errors.Is.
var (
	// ErrLimit: the archive is larger than the Limits allow.
	ErrLimit = errors.New("archive limit exceeded")
	// ErrUnsafe: an entry's name or type is not allowed in a bundle.
	ErrUnsafe = errors.New("unsafe archive entry")
	// ErrFormat: the input is not a well-formed gzip'd tar.
	ErrFormat = errors.New("malformed archive")
)

// Error describes why Extract rejected an archive.
type Error struct {
	// Entry is the entry's name as written in the archive, or "" when the
	// problem is not tied to one entry.
	Entry string
	// Kind is ErrLimit, ErrUnsafe or ErrFormat.
	Kind error
	// Detail says what was wrong, naming the limit or rule.
	Detail string
	// Limit names the limit an ErrLimit error broke: LimitFile,
	// LimitTotal or LimitEntries (a decompression bomb breaks LimitTotal),
	// so a command can say which flag raises it.
	Limit string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("archive: ")
	if e.Entry != "" {
		fmt.Fprintf(&b, "entry %q: ", e.Entry)
	}
	b.WriteString(e.Detail)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the error's kind and its cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Extract reads a gzip'd tar from r into memory, treating it as hostile.
//
// It never reads more than lim.StreamBytes() of decompressed data (nor a
// proportionate amount of compressed data), whatever the headers claim, and
// rejects: files over lim.MaxFileBytes, contents over lim.MaxTotalBytes in
// total, more than lim.MaxEntries entries, absolute paths, ".." or other
// unclean components, backslashes, control characters, names that are not
// valid UTF-8, symlinks, hard links, devices, FIFOs, sparse files, duplicate
// entries and a file that is also used as a directory. Errors are *Error.
func Extract(r io.Reader, lim Limits) (*FS, error) {
	lim = lim.WithDefaults()
	streamMax := lim.StreamBytes()

	// Deflate can encode empty blocks that produce no output, so the
	// compressed side is bounded too, not only what it expands to.
	compressed := &capReader{r: r, n: streamMax + streamMax/8 + 64<<10, what: "compressed stream"}
	gz, err := gzip.NewReader(bufio.NewReader(compressed))
	if err != nil {
		return nil, gzipError(err)
	}
	gz.Multistream(false)
	return extractTar(&capReader{r: gz, n: streamMax, what: "decompressed stream"}, lim)
}

// ExtractTar is Extract for the tar inside the gzip stream, as PackTar
// writes it: the same limits (the stream bounded to lim.StreamBytes())
// and the same rules, for a caller that holds the tar it just packed and
// need not compress and decompress it to read it back.
func ExtractTar(r io.Reader, lim Limits) (*FS, error) {
	lim = lim.WithDefaults()
	return extractTar(&capReader{r: r, n: lim.StreamBytes(), what: "tar stream"}, lim)
}

// extractTar reads the tar stream under lim (defaults applied).
func extractTar(stream io.Reader, lim Limits) (*FS, error) {
	tr := tar.NewReader(stream)

	b := newBuilder()
	var entries int
	var total int64
	prev := ""
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, streamError(err, prev)
		}
		entries++
		if entries > lim.MaxEntries {
			return nil, &Error{Entry: hdr.Name, Kind: ErrLimit, Limit: LimitEntries,
				Detail: fmt.Sprintf("more than %d entries (entry limit)", lim.MaxEntries)}
		}
		prev = hdr.Name

		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			continue // archive-wide metadata (git archive writes one); nothing to extract
		case tar.TypeDir:
			name, err := cleanName(hdr.Name, true)
			if err != nil {
				return nil, err
			}
			if name == "" {
				continue // the archive root, "./"
			}
			if err := b.addDir(hdr.Name, name); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if isSparse(hdr) {
				return nil, &Error{Entry: hdr.Name, Kind: ErrUnsafe, Detail: "sparse files are not allowed"}
			}
			name, err := cleanName(hdr.Name, false)
			if err != nil {
				return nil, err
			}
			if hdr.Size > lim.MaxFileBytes {
				return nil, &Error{Entry: hdr.Name, Kind: ErrLimit, Limit: LimitFile,
					Detail: fmt.Sprintf("size %d bytes exceeds the per-file limit of %d bytes", hdr.Size, lim.MaxFileBytes)}
			}
			if total+hdr.Size > lim.MaxTotalBytes {
				return nil, &Error{Entry: hdr.Name, Kind: ErrLimit, Limit: LimitTotal,
					Detail: fmt.Sprintf("contents of at least %d bytes exceed the total limit of %d bytes", total+hdr.Size, lim.MaxTotalBytes)}
			}
			// The size is now known to be within limits; ReadFull counts the
			// bytes that really arrive, so a lying header is a short read.
			data := make([]byte, hdr.Size)
			if _, err := io.ReadFull(tr, data); err != nil {
				return nil, streamError(err, hdr.Name)
			}
			total += hdr.Size
			if err := b.addFile(hdr.Name, name, data); err != nil {
				return nil, err
			}
		default:
			return nil, &Error{Entry: hdr.Name, Kind: ErrUnsafe,
				Detail: fmt.Sprintf("%s entries are not allowed (only regular files and directories)", typeName(hdr.Typeflag))}
		}
	}
	// Read to the end of the gzip member so its CRC and length are checked:
	// a truncated or corrupted layer must not pass because the tar
	// end-of-archive marker happened to decompress intact.
	if _, err := io.Copy(io.Discard, stream); err != nil {
		return nil, streamError(err, "")
	}
	return b.build(), nil
}

// cleanName turns a tar entry name into a clean fs.FS path ("" for the
// root), or says why it is not acceptable.
func cleanName(raw string, dir bool) (string, error) {
	bad := func(detail string) error { return &Error{Entry: raw, Kind: ErrUnsafe, Detail: detail} }
	switch {
	case !utf8.ValidString(raw):
		return "", bad("name is not valid UTF-8")
	case len(raw) > maxNameBytes:
		return "", bad(fmt.Sprintf("name is longer than %d bytes", maxNameBytes))
	case strings.HasPrefix(raw, "/"):
		return "", bad("absolute path")
	case strings.Contains(raw, `\`):
		return "", bad("backslash in name")
	}
	for _, c := range raw {
		if c < 0x20 || c == 0x7f {
			return "", bad(fmt.Sprintf("control character %U in name", c))
		}
	}
	name := strings.TrimPrefix(raw, "./")
	if dir {
		name = strings.TrimSuffix(name, "/")
		if name == "" || name == "." {
			return "", nil
		}
	}
	for _, elem := range strings.Split(name, "/") {
		switch elem {
		case "..":
			return "", bad(`path traversal ("..")`)
		case "", ".":
			return "", bad(`unclean path (empty or "." component)`)
		}
	}
	return name, nil
}

func isSparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "FIFO"
	case tar.TypeGNUSparse:
		return "sparse file"
	default:
		return fmt.Sprintf("type %q", t)
	}
}

func gzipError(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return &Error{Kind: ErrFormat, Detail: "empty input, not a gzip stream"}
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: ErrFormat, Detail: "not a gzip stream", Err: err}
	}
	return streamError(err, "")
}

// streamError classifies an error from reading the tar stream; after names
// the last entry read, to locate the problem.
func streamError(err error, after string) error {
	var limit *limitError
	if errors.As(err, &limit) {
		return &Error{Entry: after, Kind: ErrLimit, Limit: LimitTotal, Detail: limit.Error()}
	}
	detail := "corrupt archive"
	if errors.Is(err, io.ErrUnexpectedEOF) {
		detail = "truncated archive"
	}
	if after != "" {
		return &Error{Entry: after, Kind: ErrFormat, Detail: detail, Err: err}
	}
	return &Error{Kind: ErrFormat, Detail: detail, Err: err}
}

// capReader reads at most n bytes from r and then fails with a limitError,
// rather than reporting io.EOF, so that reaching the cap is never mistaken
// for the end of the archive.
type capReader struct {
	r    io.Reader
	n    int64
	read int64
	what string
}

type limitError struct {
	what string
	max  int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("%s exceeds %d bytes (decompression bomb or limits too small)", e.what, e.max)
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		// Probe one byte: at exactly the cap the stream may simply end.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, &limitError{what: c.what, max: c.n}
		}
		return 0, err
	}
	if rest := c.n - c.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

// builder accumulates entries and checks them against each other.
type builder struct {
	nodes map[string]*node
}

type node struct {
	data     []byte
	dir      bool
	explicit bool // a directory that had its own entry, not only implied by a child
}

func newBuilder() *builder { return &builder{nodes: map[string]*node{}} }

func (b *builder) addFile(raw, name string, data []byte) error {
	if n, ok := b.nodes[name]; ok {
		if n.dir {
			return &Error{Entry: raw, Kind: ErrUnsafe, Detail: "file has the same path as a directory"}
		}
		return &Error{Entry: raw, Kind: ErrUnsafe, Detail: "duplicate entry"}
	}
	if err := b.addParents(raw, name); err != nil {
		return err
	}
	b.nodes[name] = &node{data: data}
	return nil
}

func (b *builder) addDir(raw, name string) error {
	if n, ok := b.nodes[name]; ok {
		switch {
		case !n.dir:
			return &Error{Entry: raw, Kind: ErrUnsafe, Detail: "directory has the same path as a file"}
		case n.explicit:
			return &Error{Entry: raw, Kind: ErrUnsafe, Detail: "duplicate entry"}
		}
		n.explicit = true
		return nil
	}
	if err := b.addParents(raw, name); err != nil {
		return err
	}
	b.nodes[name] = &node{dir: true, explicit: true}
	return nil
}

// addParents makes sure every parent of name is a directory.
func (b *builder) addParents(raw, name string) error {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		n, ok := b.nodes[d]
		if !ok {
			b.nodes[d] = &node{dir: true}
			continue
		}
		if !n.dir {
			return &Error{Entry: raw, Kind: ErrUnsafe, Detail: fmt.Sprintf("parent %q is a file", d)}
		}
		return nil // a directory's own parents were added with it
	}
	return nil
}
