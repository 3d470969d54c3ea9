package validate_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/validate"
)

// failingResolver answers every ref with err.
type failingResolver struct{ err error }

func (r failingResolver) Resolve(context.Context, string) (fs.FS, error) { return nil, r.err }

// A ref that cannot be fetched because of the network is "could not
// check" (REF_UNREACHABLE), never "invalid"; any other resolver failure
// keeps its own code, and a real error elsewhere still makes the contract
// invalid. The resolver is a stand-in for the network's answers; the CLI
// and MCP tests reach a real closed port.
func TestUnreachableRefsAreCouldNotCheck(t *testing.T) {
	refs := head + "configurations: [{name: app, required: true, ref: oci://reg.example.com/cfg/app:1.0.0}]\npolicies: [{name: org, ref: oci://reg.example.com/pol/org:1.0.0}]\n"
	dns := &net.DNSError{Err: "no such host", Name: "reg.example.com", IsNotFound: true}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, tc := range []struct {
		name          string
		contract      string
		err           error
		codes         []string
		couldNotCheck bool
	}{
		{name: "no such host", contract: refs, err: fmt.Errorf("oci: pulling: %w", dns),
			codes: []string{validate.CodeRefUnreachable, validate.CodeRefUnreachable}, couldNotCheck: true},
		{name: "connection refused", contract: refs, err: fmt.Errorf("oci: %w", refused),
			codes: []string{validate.CodeRefUnreachable, validate.CodeRefUnreachable}, couldNotCheck: true},
		{name: "timeout", contract: refs, err: fmt.Errorf("oci: %w", context.DeadlineExceeded),
			codes: []string{validate.CodeRefUnreachable, validate.CodeRefUnreachable}, couldNotCheck: true},
		{name: "marked by the resolver", contract: refs, err: fmt.Errorf("registry answered 503: %w", validate.ErrUnreachable),
			codes: []string{validate.CodeRefUnreachable, validate.CodeRefUnreachable}, couldNotCheck: true},
		{name: "not found is an answer", contract: refs, err: errors.New("manifest unknown"),
			codes: []string{validate.CodeInvalidConfigRef}},
		{name: "unreachable plus a real error is invalid", contract: refs + "readiness: [{id: a, description: x, evidence: [e]}, {id: a, description: y, evidence: [e]}]\n", err: dns,
			couldNotCheck: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := validate.ValidateBytes(t.Context(), []byte(tc.contract), fstest.MapFS{}, &validate.Options{Resolver: failingResolver{tc.err}})
			var codes []string
			for _, f := range res.Errors {
				codes = append(codes, f.Code)
			}
			if tc.codes != nil && fmt.Sprint(codes) != fmt.Sprint(tc.codes) {
				t.Errorf("codes %v, want %v: %+v", codes, tc.codes, res.Errors)
			}
			if res.CouldNotCheck() != tc.couldNotCheck || res.Valid() {
				t.Errorf("CouldNotCheck %v Valid %v, want %v false: %+v", res.CouldNotCheck(), res.Valid(), tc.couldNotCheck, res.Errors)
			}
		})
	}
}
