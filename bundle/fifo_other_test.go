//go:build !unix

package bundle

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }
