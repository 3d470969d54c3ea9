package openapitools

import (
	"strings"
	"testing"
)

// TestLockKeepsNames: a lock written under one name cap holds its names
// under another, so a tool's name never shifts while the lock stands; a
// new operationId is a new identity and is named anew.
func TestLockKeepsNames(t *testing.T) {
	long := "getTheHealthOfTheCatalogServiceIncludingEveryDependencyAndItsLatency"
	dir := catalogCopy(t, [2]string{"operationId: getHealth", "operationId: " + long})
	wide := projectDir(t, dir, &Options{AllowWrites: true, IgnoreBundleLock: true, MaxNameLength: MaxNameLength})
	if wide.Tool(long) == nil {
		t.Fatalf("with a cap of %d the tool is not %s: %v", MaxNameLength, long, toolNames(wide))
	}
	capped := projectDir(t, dir, &Options{AllowWrites: true, IgnoreBundleLock: true})
	short := ""
	for _, tl := range capped.Tools {
		if tl.Path == "/healthz" {
			short = tl.Name
		}
	}
	if len(short) > DefaultNameCap || !strings.HasPrefix(short, "get") {
		t.Fatalf("under the default cap the name is %q", short)
	}
	// Held to the lock written with the wide cap, the default cap keeps
	// the locked name and nothing drifts.
	held := projectDir(t, dir, &Options{AllowWrites: true, Lock: NewLock(wide)})
	if held.Tool(long) == nil || len(held.Lock.Drifted) != 0 || len(held.Lock.Missing) != 0 {
		t.Errorf("held to the lock: tools %v, drifted %v, missing %v; want %s kept", toolNames(held), held.Lock.Drifted, held.Lock.Missing, long)
	}
	// Names are the same on every run.
	again := projectDir(t, dir, &Options{AllowWrites: true, IgnoreBundleLock: true})
	for i, tl := range again.Tools {
		if capped.Tools[i].Name != tl.Name {
			t.Errorf("run 2 names %s %q; run 1 %q", tl.Path, tl.Name, capped.Tools[i].Name)
		}
	}
	// A cap out of range is refused in words.
	if _, err := project(t.Context(), testdataFS(t), []spec{{name: "n", file: "naming.yaml"}}, &Options{MaxNameLength: 10}); err == nil || !strings.Contains(err.Error(), "MaxNameLength 10: want 24 to 128") {
		t.Errorf("cap 10: %v", err)
	}
}
