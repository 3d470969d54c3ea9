// Package protofiles compiles the .proto files of a Pacto bundle's gRPC
// interfaces with protocompile, confined to the bundle and bounded: imports
// resolve inside the bundle only (the file's own directory, then the
// bundle root) plus the google/protobuf standard imports; an import with
// .. or a leading /, a missing file, a cycle, or more files, bytes or
// message types than Limits allow is an error naming the file (and, for
// what the compiler reports, its line and column). Bundle content is
// untrusted: nothing here may panic or grow without a bound on any input.
//
// The validator (pacto_check), the diff and the gRPC tools compile
// through it. It imports no kubepact package.
package protofiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Limits bound what one compile reads from a bundle. Zero fields take the
// defaults below.
type Limits struct {
	// MaxFiles is the most .proto files one interface may reach through its
	// imports, itself included (the standard imports are not counted).
	MaxFiles int
	// MaxBytes bounds the bytes of all those files together.
	MaxBytes int64
	// MaxMessages bounds the message types they declare together.
	MaxMessages int
}

// Defaults for zero Limits fields.
const (
	DefaultMaxFiles    = 64
	DefaultMaxBytes    = 4 << 20
	DefaultMaxMessages = 2048
)

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxMessages <= 0 {
		l.MaxMessages = DefaultMaxMessages
	}
	return l
}

// CompileError is a .proto file that does not compile: each line names the
// bundle file, line and column and says what is wrong there.
type CompileError struct {
	// File is the bundle path of the interface's .proto file.
	File string
	// Problems are "path:line:col: message" lines, at most maxProblems.
	Problems []string
}

const maxProblems = 20

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s does not compile: %s", e.File, strings.Join(e.Problems, "; "))
}

// errLimit marks a compile stopped by a Limits bound.
var errLimit = errors.New("limit reached")

// Compile compiles the .proto file at the bundle path file, resolving its
// imports inside fsys only: an import path is looked up relative to the
// file's own directory, then to the bundle root; google/protobuf/*.proto
// come from the standard imports. An import that leaves the bundle (an
// absolute path, a path with ..) is an error naming it, and so are
// import chains or sizes beyond lim.
func Compile(ctx context.Context, fsys fs.FS, file string, lim Limits) (linker.Files, error) {
	lim = lim.withDefaults()
	file = strings.TrimPrefix(file, "./")
	if !fs.ValidPath(file) || !strings.HasSuffix(file, ".proto") {
		return nil, fmt.Errorf("interface ref %q: a gRPC interface is a bundle-relative path of a .proto file (no .., no leading /)", file)
	}
	r := &bundleResolver{fsys: fsys, dir: path.Dir(file), lim: lim, seen: map[string]bool{}}
	var (
		mu       sync.Mutex
		problems []string
	)
	rep := reporter.NewReporter(func(err reporter.ErrorWithPos) error {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < maxProblems {
			pos := err.GetPosition()
			problems = append(problems, fmt.Sprintf("%s:%d:%d: %s", r.bundlePath(pos.Filename), pos.Line, pos.Col, problemText(err.Unwrap())))
		}
		return nil // keep going: report every problem of the file at once
	}, nil)
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(r),
		Reporter:       rep,
		SourceInfoMode: protocompile.SourceInfoStandard,
		MaxParallelism: 1,
	}
	files, err := c.Compile(ctx, r.importPath(file))
	if err != nil {
		if r.limitErr != nil {
			return nil, r.limitErr
		}
		if len(problems) == 0 {
			problems = []string{problemText(err)}
		}
		return nil, &CompileError{File: file, Problems: problems}
	}
	n := 0
	for _, f := range files {
		n += countMessages(f.Messages())
	}
	if n > lim.MaxMessages {
		return nil, fmt.Errorf("%s: its files declare %d message types; at most %d are read (Limits.MaxMessages)", file, n, lim.MaxMessages)
	}
	return files, nil
}

// problemText is an error's text without the position protocompile puts
// in front of some of its messages.
func problemText(err error) string {
	if err == nil {
		return "unknown problem"
	}
	var ep reporter.ErrorWithPos
	if errors.As(err, &ep) {
		return problemText(ep.Unwrap())
	}
	return err.Error()
}

// bundleResolver reads .proto sources from the bundle, confined to it and
// bounded by lim.
type bundleResolver struct {
	fsys fs.FS
	dir  string // the interface file's directory
	lim  Limits

	mu       sync.Mutex
	seen     map[string]bool
	bytes    int64
	limitErr error
	// where maps an import path to the bundle path it was read from.
	where sync.Map
}

// importPath is the import path under which the interface file itself
// is compiled: relative to its own directory, the first place imports
// are looked up.
func (r *bundleResolver) importPath(file string) string {
	if r.dir == "." {
		return file
	}
	return strings.TrimPrefix(file, r.dir+"/")
}

// bundlePath is where an import path was read from, for messages.
func (r *bundleResolver) bundlePath(importPath string) string {
	if p, ok := r.where.Load(importPath); ok {
		return p.(string)
	}
	return importPath
}

// FindFileByPath implements protocompile.Resolver.
func (r *bundleResolver) FindFileByPath(p string) (protocompile.SearchResult, error) {
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || !fs.ValidPath(p) {
		return protocompile.SearchResult{}, fmt.Errorf("import %q leaves the bundle: imports are bundle-relative paths without .. or a leading /", p)
	}
	candidates := []string{p}
	if r.dir != "." {
		candidates = []string{path.Join(r.dir, p), p}
	}
	for _, c := range candidates {
		data, err := r.read(c)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return protocompile.SearchResult{}, err
		}
		r.where.Store(p, c)
		return protocompile.SearchResult{Source: bytes.NewReader(data)}, nil
	}
	return protocompile.SearchResult{}, fmt.Errorf("import %q: no such file in the bundle (looked in %s): %w", p, strings.Join(candidates, ", "), fs.ErrNotExist)
}

func (r *bundleResolver) read(p string) ([]byte, error) {
	st, err := fs.Stat(r.fsys, p)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a .proto file", p)
	}
	r.mu.Lock()
	if !r.seen[p] {
		r.seen[p] = true
		if len(r.seen) > r.lim.MaxFiles {
			r.limitErr = fmt.Errorf("%s: the interface reaches more than %d .proto files through its imports (Limits.MaxFiles)", p, r.lim.MaxFiles)
		}
		r.bytes += st.Size()
		if r.limitErr == nil && r.bytes > r.lim.MaxBytes {
			r.limitErr = fmt.Errorf("%s: the interface's .proto files exceed %d bytes together (Limits.MaxBytes)", p, r.lim.MaxBytes)
		}
	}
	lerr := r.limitErr
	r.mu.Unlock()
	if lerr != nil {
		return nil, fmt.Errorf("%w: %w", errLimit, lerr)
	}
	f, err := r.fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, r.lim.MaxBytes+1))
}

// countMessages counts message types, nested ones included.
func countMessages(ms protoreflect.MessageDescriptors) int {
	n := ms.Len()
	for i := range ms.Len() {
		n += countMessages(ms.Get(i).Messages())
	}
	return n
}
