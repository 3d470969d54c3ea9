package payload

import (
	"fmt"
	"strings"
)

// Error codes of *Error.
const (
	CodeInvalidArgument = "INVALID_ARGUMENT" // the question is malformed (a missing or conflicting subject field, a value past a bound)
	CodeNotFound        = "NOT_FOUND"        // the contract has no such operation, status, message or configuration
	CodeInvalidContract = "INVALID_CONTRACT" // the contract does not parse
	// CodeSchemaUnavailable: the subject exists but its schema cannot be
	// evaluated here (written in another schema language, in another
	// bundle, or unreadable); the message says which.
	CodeSchemaUnavailable = "SCHEMA_UNAVAILABLE"
)

// Error is a question the contract cannot answer. Field names the
// Subject or FieldQuery field at fault (Operation, Status, Message,
// Configuration, Kind, Path) or Value.
type Error struct {
	Code    string
	Field   string
	Message string
	// Accepted lists the names the contract has for Field (bounded).
	Accepted []string
	// DidYouMean is the accepted name nearest to the one given.
	DidYouMean string
}

func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.DidYouMean != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.DidYouMean)
	}
	return msg
}

// maxAccepted bounds Accepted lists.
const maxAccepted = 50

func acceptedList(names []string) []string {
	if len(names) > maxAccepted {
		names = names[:maxAccepted]
	}
	return names
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(" and %d more", len(names)-20)
	}
	return strings.Join(names, ", ")
}
