package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// inWords is err's message with the operating system's text of a file
// error in it ("open /run/token: no such file or directory") said in words
// ("/run/token does not exist"); the rest of the message, which names the
// flag, stays as it is.
func inWords(err error) string {
	msg := err.Error()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return msg
	}
	var why string
	switch {
	case errors.Is(pe, fs.ErrNotExist):
		why = pe.Path + " does not exist"
	case errors.Is(pe, syscall.ENOTDIR):
		why = pe.Path + " cannot be used: a part of that path is a file, not a directory"
	case errors.Is(pe, syscall.EISDIR):
		why = pe.Path + " is a directory; a file is needed here"
	case errors.Is(pe, fs.ErrPermission):
		why = pe.Path + " may not be opened by this user (permission denied)"
	case errors.Is(pe, syscall.ELOOP):
		why = pe.Path + " is a symbolic link loop"
	default:
		return msg
	}
	return strings.Replace(msg, pe.Error(), why, 1)
}

// outputFailure says why the file a command writes (path: -o, or its
// default) could not be written: in words, about path and the directory
// it goes in, not the temporary file beside it the atomic write went
// through; path is left as it was, which the message says.
func outputFailure(path string, err error) string {
	dir := filepath.Dir(path)
	var why string
	switch {
	case isDir(path):
		why = "it is a directory: give -o the path of a file to write"
	case errors.Is(err, syscall.ENOTDIR):
		why = "a part of " + dir + " is a file, not a directory: choose another file with -o"
	case errors.Is(err, fs.ErrNotExist) && !isDir(dir):
		why = "the directory " + dir + " does not exist: create it, or choose another file with -o"
	case errors.Is(err, fs.ErrNotExist):
		why = "files cannot be created in " + dir + ": choose another file with -o"
	case errors.Is(err, fs.ErrPermission):
		why = "this user may not create files in " + dir + ": choose another file with -o, or change the directory's permissions"
	case errors.Is(err, syscall.EROFS):
		why = dir + " is on a read-only file system: choose another file with -o"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		why = "the disk holding " + dir + " is full: free some space, or choose another file with -o"
	default:
		why = "writing a file in " + dir + " failed: check the directory and the disk, or choose another file with -o"
	}
	return "cannot write " + path + ": " + why + "; nothing was written"
}

// refuseOutputDir refuses, before any work, an output path that is a
// directory: the command would do its work and then fail to write.
func refuseOutputDir(path string) error {
	if isDir(path) {
		return &exitError{code: 2, msg: outputFailure(path, nil)}
	}
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
