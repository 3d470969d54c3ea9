package grpctools

import (
	"context"
	"io/fs"

	"github.com/bufbuild/protocompile/linker"

	"github.com/kubepact/kubepact/internal/protofiles"
)

// Limits bound what one compile reads from a bundle (see
// internal/protofiles).
type Limits = protofiles.Limits

// CompileError is a .proto file that does not compile.
type CompileError = protofiles.CompileError

// Compile compiles the .proto file at the bundle path file inside fsys
// (see internal/protofiles.Compile).
func Compile(ctx context.Context, fsys fs.FS, file string, lim Limits) (linker.Files, error) {
	return protofiles.Compile(ctx, fsys, file, lim)
}
