package fleetgraph_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// TestSanitizeErrorReadsTypesNotText: a source failure's code is
// bundle/failure's Kind of it, read from its type; words such as "not
// found" or "denied" in an error of no known type are not taken for one.
func TestSanitizeErrorReadsTypesNotText(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"missing file", fmt.Errorf("scanning: %w", fs.ErrNotExist), failure.CodeNotFound},
		{"permission", &fs.PathError{Op: "open", Path: "/srv/fleet", Err: fs.ErrPermission}, failure.CodeAuthFailed},
		{"cancelled", fmt.Errorf("listing: %w", context.Canceled), failure.CodeCancelled},
		{"registry 404", fmt.Errorf("pulling: %w", oci.ErrNotFound), failure.CodeNotFound},
		{"foreign artifact", fmt.Errorf("pulling: %w: layer media type", oci.ErrInvalidArtifact), failure.CodeUnreadable},
		{"no pacto.yaml", fmt.Errorf("loading: %w", bundle.ErrNoContract), failure.CodeUnreadable},
		{"over a limit", &archive.Error{Kind: archive.ErrLimit, Limit: archive.LimitTotal}, failure.CodeTooLarge},
		{"words alone", errors.New("manifest not found: access denied, unauthorized, forbidden"), failure.CodeUnavailable},
	} {
		got := fleetgraph.SanitizeError(tc.err)
		if got == nil || got.Code != tc.want || got.Message == "" || got.Message == tc.err.Error() {
			t.Errorf("%s: %+v, want code %s with a message of ours", tc.name, got, tc.want)
		}
	}
	if fleetgraph.SanitizeError(nil) != nil {
		t.Error("SanitizeError(nil) is not nil")
	}
}
