package oci_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/oci"
)

func TestParseReference(t *testing.T) {
	dgst := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		in   string
		want oci.Reference
	}{
		{in: "oci://ghcr.io/acme/orders:1.2.0", want: oci.Reference{Registry: "ghcr.io", Repository: "acme/orders", Tag: "1.2.0"}},
		{in: "ghcr.io/acme/orders", want: oci.Reference{Registry: "ghcr.io", Repository: "acme/orders"}},
		{in: "localhost:5000/orders@" + dgst, want: oci.Reference{Registry: "localhost:5000", Repository: "orders", Digest: dgst}},
		{in: "127.0.0.1:5000/a/b/c:v1@" + dgst, want: oci.Reference{Registry: "127.0.0.1:5000", Repository: "a/b/c", Tag: "v1", Digest: dgst}},
		{in: "localhost/x", want: oci.Reference{Registry: "localhost", Repository: "x"}},
		{in: "[::1]:5000/my_repo/sub-name.x:Tag_1.0-rc.1", want: oci.Reference{Registry: "[::1]:5000", Repository: "my_repo/sub-name.x", Tag: "Tag_1.0-rc.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := oci.ParseReference(tt.in)
			if err != nil {
				t.Fatalf("ParseReference() error = %v", err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("ParseReference() (-got +want):\n%s", diff)
			}
			again, err := oci.ParseReference(got.String())
			if err != nil || again != got {
				t.Errorf("ParseReference(String()) = %v, %v; want %v", again, err, got)
			}
		})
	}
}

func TestParseReferenceRejects(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "", want: "empty"},
		{in: "oci://", want: "empty"},
		{in: "acme/orders:1.0", want: `"acme" is not a registry host`},
		{in: "orders", want: "has no registry host"},
		{in: "ghcr.io/", want: "the repository is missing"},
		{in: "ghcr.io/Acme/orders", want: `repository path component "Acme"`},
		{in: "ghcr.io/acme//orders", want: `repository path component ""`},
		{in: "ghcr.io/acme/../orders", want: `repository path component ".."`},
		{in: "ghcr.io/acme/orders:", want: `tag ""`},
		{in: "ghcr.io/acme/orders:-bad", want: `tag "-bad"`},
		{in: "ghcr.io/acme/orders:" + strings.Repeat("t", 129), want: "tag"},
		{in: "ghcr.io/acme/orders@sha256:abc", want: "digest"},
		{in: "ghcr.io/acme/orders@md5:" + strings.Repeat("0", 32), want: "digest"},
		{in: "gh_cr.io/acme/orders", want: "is not a host[:port]"},
		{in: "ghcr.io:port/acme/orders", want: "is not a host[:port]"},
		{in: "https://ghcr.io/acme/orders", want: "is not a host[:port]"},
		{in: "ghcr.io:70000/acme/orders", want: `registry port "70000"`},
		{in: "127.0.0.1:0/acme/orders", want: `registry port "0"`},
		{in: "ghcr.io/" + strings.Repeat("a", 260), want: "longer than 255"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := oci.ParseReference(tt.in)
			if !errors.Is(err, oci.ErrInvalidReference) {
				t.Fatalf("ParseReference() error = %v; want oci.ErrInvalidReference", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseReference() error = %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseBundleRef(t *testing.T) {
	for _, tt := range []struct {
		in, local, registry, want string
	}{
		{in: "oci://ghcr.io/acme/orders:1.0.0", registry: "ghcr.io"},
		{in: "file://../policies", local: "../policies"},
		{in: "./policies", local: "./policies"},
		{in: "/abs/bundle", local: "/abs/bundle"},
		{in: "oci://ghcr.io/Acme", want: "repository path component"},
		{in: "https://ghcr.io/acme/orders", want: `scheme "https" is not supported`},
		{in: "file://", want: "names no directory"},
		{in: "  ", want: "reference is empty"},
	} {
		got, err := oci.ParseBundleRef(tt.in)
		if tt.want != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseBundleRef(%q) error = %v; want it to contain %q", tt.in, err, tt.want)
			}
			continue
		}
		if err != nil || got.Local != tt.local || got.OCI.Registry != tt.registry || got.IsLocal() != (tt.local != "") {
			t.Errorf("ParseBundleRef(%q) = %+v, %v", tt.in, got, err)
		}
	}
}
