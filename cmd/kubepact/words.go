package main

import (
	"errors"
	"io/fs"
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
