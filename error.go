package rein

import (
	"errors"
	"fmt"
)

// Error codes of the HTTP API (api.md, Errors). Each maps to one HTTP status.
const (
	ECodeBadRequest       = "bad_request"
	ECodeUnauthenticated  = "unauthenticated"
	ECodeForbidden        = "forbidden"
	ECodeNotFound         = "not_found"
	ECodeMethodNotAllowed = "method_not_allowed"
	ECodeConflict         = "conflict"
	// ECodeStaleRevision (409): a vote for a revision of the action that is
	// no longer current; the error's details hold the approval as it is.
	ECodeStaleRevision = "stale_revision"
	ECodeGone          = "gone"
	ECodeTooLarge      = "too_large"
	ECodeUnavailable   = "unavailable"
	ECodeInternal      = "internal"
)

// Error is an error a user can act on: a machine code and a message that says
// what is wrong and how to fix it. Anything else reaching the API edge is an
// internal error and is not shown to callers.
type Error struct {
	Code    string
	Message string
	// Details, when set, is sent as the error's "details" (a stale vote's
	// current approval).
	Details any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, else ECodeInternal.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// ErrorMessage returns the user-facing message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error; the server log has details"
}
