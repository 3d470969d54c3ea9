package catalog

import "fmt"

// Bounds cap what one catalog may cost. A zero field takes its default; a
// field above its ceiling, or negative, is refused by [Build] before
// anything is resolved. Defaults and ceilings are Pacto's.
type Bounds struct {
	// MaxRoots bounds the requested roots (default 50, ceiling 200).
	MaxRoots int `json:"maxRoots"`
	// MaxRevisions bounds the deduplicated revisions (500, 5000).
	MaxRevisions int `json:"maxRevisions"`
	// MaxEdges bounds the dependency declarations followed: the units of
	// work (2000, 20000).
	MaxEdges int `json:"maxEdges"`
	// MaxDepth bounds how many dependency hops from a root are followed
	// (10, 25).
	MaxDepth int `json:"maxDepth"`
	// MaxPathsPerRevision bounds the paths kept for one revision (20, 200).
	MaxPathsPerRevision int `json:"maxPathsPerRevision"`
	// MaxPathLength bounds the steps of a kept path (10, 25).
	MaxPathLength int `json:"maxPathLength"`
	// MaxUnresolved bounds the unresolved dependencies listed (200, 2000).
	MaxUnresolved int `json:"maxUnresolved"`
	// MaxConflicts bounds the conflicts listed (200, 2000).
	MaxConflicts int `json:"maxConflicts"`
	// MaxLimitations bounds the limitations listed (100, 1000).
	MaxLimitations int `json:"maxLimitations"`
}

// DefaultBounds are the bounds a zero field takes.
var DefaultBounds = Bounds{MaxRoots: 50, MaxRevisions: 500, MaxEdges: 2000, MaxDepth: 10, MaxPathsPerRevision: 20,
	MaxPathLength: 10, MaxUnresolved: 200, MaxConflicts: 200, MaxLimitations: 100}

// CeilingBounds are the largest bounds accepted.
var CeilingBounds = Bounds{MaxRoots: 200, MaxRevisions: 5000, MaxEdges: 20000, MaxDepth: 25, MaxPathsPerRevision: 200,
	MaxPathLength: 25, MaxUnresolved: 2000, MaxConflicts: 2000, MaxLimitations: 1000}

// fields lists the bounds by their option field names, for checks and
// messages.
func (b *Bounds) fields() []struct {
	name string
	v    *int
} {
	return []struct {
		name string
		v    *int
	}{
		{"MaxRoots", &b.MaxRoots}, {"MaxRevisions", &b.MaxRevisions}, {"MaxEdges", &b.MaxEdges},
		{"MaxDepth", &b.MaxDepth}, {"MaxPathsPerRevision", &b.MaxPathsPerRevision}, {"MaxPathLength", &b.MaxPathLength},
		{"MaxUnresolved", &b.MaxUnresolved}, {"MaxConflicts", &b.MaxConflicts}, {"MaxLimitations", &b.MaxLimitations},
	}
}

// withDefaults returns b with zero fields defaulted, or an error naming
// the first field that is negative or above its ceiling.
func (b Bounds) withDefaults() (Bounds, error) {
	def, ceil := DefaultBounds, CeilingBounds
	df, cf := def.fields(), ceil.fields()
	for i, f := range b.fields() {
		switch {
		case *f.v < 0:
			return Bounds{}, &OptionError{Field: "Bounds." + f.name, Message: fmt.Sprintf("is %d: want 0 (the default, %d) up to %d", *f.v, *df[i].v, *cf[i].v)}
		case *f.v > *cf[i].v:
			return Bounds{}, &OptionError{Field: "Bounds." + f.name, Message: fmt.Sprintf("is %d: the ceiling is %d", *f.v, *cf[i].v)}
		case *f.v == 0:
			*f.v = *df[i].v
		}
	}
	return b, nil
}

// OptionError is an option [Build] refuses. It names the option field, not
// a flag: a command maps fields to its own flags.
type OptionError struct {
	Field   string
	Message string
}

func (e *OptionError) Error() string { return e.Field + " " + e.Message }
