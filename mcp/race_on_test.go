//go:build race

package mcp

// raceEnabled says the race detector is on: it changes what allocates
// (the runtime and sync record more), so a bound on a whole call's
// objects has a figure for each mode.
const raceEnabled = true
