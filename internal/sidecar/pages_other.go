//go:build !linux

package sidecar

// ReleaseStartupPages does nothing off Linux (see pages_linux.go).
func ReleaseStartupPages() int64 { return 0 }
