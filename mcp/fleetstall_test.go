package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStallWatchLooks drives the watch's looks by hand (its own ticker
// is an hour away): progress between two looks keeps the context, a look
// with none since the last ends it with the stall error, and stop says so.
func TestStallWatchLooks(t *testing.T) {
	ctx, w := newStallWatch(t.Context(), time.Hour)
	w.progress()
	w.progress()
	if w.look() {
		t.Fatal("the first look after progress ended the watch")
	}
	w.progress()
	if w.look() || ctx.Err() != nil {
		t.Fatalf("a look after progress ended the context: %v", ctx.Err())
	}
	if !w.look() {
		t.Fatal("a look with no progress since the last did not end the watch")
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Errorf("cause %v: want a deadline, as sources classify it", context.Cause(ctx))
	}
	err := w.stop()
	if err == nil || !strings.Contains(err.Error(), "no progress for 1h0m0s") {
		t.Errorf("stop after a stall: %v", err)
	}
	if w.stop() == nil {
		t.Error("a second stop forgot the stall")
	}
}

// TestStallWatchStop: a collection that ends first releases the context
// and reports no stall.
func TestStallWatchStop(t *testing.T) {
	ctx, w := newStallWatch(t.Context(), time.Hour)
	if err := w.stop(); err != nil {
		t.Fatalf("stop before any look: %v", err)
	}
	if ctx.Err() == nil {
		t.Error("stop left the context open")
	}
	if w.look(); !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("a look after stop changed the cause to %v", context.Cause(ctx))
	}
}
