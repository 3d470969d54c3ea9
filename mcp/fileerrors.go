package mcp

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/kubepact/kubepact/internal/authoring"
)

// fileToolError says in words what a file system error a tool ran into
// means and what to do, keeping the context the tool wrote before it
// ("reading orders/pacto.yaml: …") and dropping the operating system's
// own text ("openat orders/pacto.yaml: not a directory"), whose absolute
// paths and call names are the server's business. Nil when err holds no
// *fs.PathError.
func fileToolError(err error) *ToolError {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	context := strings.TrimSuffix(strings.TrimSuffix(err.Error(), pe.Error()), ": ")
	if context == "" || context == err.Error() {
		context = "a file the tool needs could not be used"
	}
	te := &ToolError{Code: CodeInternal, cause: err}
	var why string
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		te.Code, why = CodeInvalidArgument, "a part of that path is a file, not a directory; give a path whose every parent is a directory"
	case errors.Is(err, syscall.EISDIR):
		te.Code, why = CodeInvalidArgument, "it is a directory, not a file; a bundle's pacto.yaml (and every file it names) must be a regular file"
	case errors.Is(err, fs.ErrNotExist):
		te.Code, why = authoring.CodeNotFound, "it does not exist"
	case errors.Is(err, syscall.ELOOP), strings.Contains(pe.Err.Error(), "path escapes from parent"):
		te.Code, why = authoring.CodePathOutsideWorkspace, "it leads outside the workspace through a symbolic link, which is not followed"
	case errors.Is(err, syscall.ENAMETOOLONG):
		te.Code, why = CodeInvalidArgument, "a name in that path is too long for the file system"
	case errors.Is(err, fs.ErrPermission):
		why = "the server's user may not access it (permission denied); the server's operator must grant access, or choose another workspace"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		why = "the disk holding the workspace is full; nothing was written"
	case errors.Is(err, syscall.EROFS):
		why = "the workspace is on a read-only file system; start the server with a writable --workspace, or --read-only"
	default:
		why = "the file system refused the operation; the server's log has its error"
	}
	te.Message = context + ": " + why
	return te
}
