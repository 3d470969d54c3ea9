//go:build !unix

package mcp

// oNonblock is nothing where FIFOs do not block an open.
const oNonblock = 0
