package validate_test

import (
	"context"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/validate"
)

// recordingResolver is a mapResolver that remembers what it was asked.
type recordingResolver struct {
	m     mapResolver
	asked []string
}

func (r *recordingResolver) Resolve(ctx context.Context, ref string) (fs.FS, error) {
	r.asked = append(r.asked, ref)
	return r.m.Resolve(ctx, ref)
}

// TestNestedRefsResolveAgainstTheirBundle: a ref inside a referenced bundle
// is that bundle's ref. A local one is relative to that bundle, not to the
// bundle being validated, and one inside a bundle from a registry is never
// followed: remote content must not make us read local directories.
func TestNestedRefsResolveAgainstTheirBundle(t *testing.T) {
	contractWith := func(extra string) []byte {
		return []byte("pactoVersion: \"2.0\"\nservice:\n  name: pol\n  version: 1.0.0\n" + extra)
	}
	requireState := []byte(`{"type":"object","required":["state"]}`)
	permissive := []byte(`{"type":"object"}`)
	policyBundle := func(schema []byte) fs.FS {
		return fstest.MapFS{
			"pacto.yaml":         {Data: contractWith("policies: [{name: p, schema: policy/schema.json}]\n")},
			"policy/schema.json": {Data: schema},
		}
	}
	tests := []struct {
		name      string
		contract  string
		bundles   mapResolver
		wantCodes []validate.Finding
		notAsked  string
	}{{
		name:     "policy bundle from a registry refers to a local path",
		contract: head + "policies: [{name: org, ref: oci://reg.example.com/policies/org:1.0.0}]\n",
		bundles: mapResolver{
			"oci://reg.example.com/policies/org:1.0.0": fstest.MapFS{"pacto.yaml": {Data: contractWith("policies: [{name: inner, ref: ../../home/user/policy}]\n")}},
			"../../home/user/policy":                   policyBundle(permissive),
		},
		wantCodes: []validate.Finding{{Path: "policies[0].ref", Code: validate.CodePolicyRefUnresolved}},
		notAsked:  "../../home/user/policy",
	}, {
		name:     "local policy bundle refers to a sibling of its own",
		contract: head + "policies: [{name: org, ref: ../policies/baseline}]\n",
		bundles: mapResolver{
			"../policies/baseline": fstest.MapFS{"pacto.yaml": {Data: contractWith("policies: [{name: inner, ref: ../strict}]\n")}},
			"../policies/strict":   policyBundle(requireState),
			"../strict":            policyBundle(permissive), // the wrong directory
		},
		wantCodes: []validate.Finding{{Path: "state", Code: validate.CodePolicyViolation}},
		notAsked:  "../strict",
	}, {
		name:     "configuration bundle from a registry refers to a local path",
		contract: head + "configurations: [{name: app, required: true, ref: oci://reg.example.com/cfg/app:1.0.0}]\n",
		bundles: mapResolver{
			"oci://reg.example.com/cfg/app:1.0.0": fstest.MapFS{"pacto.yaml": {Data: contractWith("configurations: [{name: c, required: true, ref: /etc/cfg}]\n")}},
			"/etc/cfg":                            fstest.MapFS{"pacto.yaml": {Data: contractWith("")}, "configuration/schema.json": {Data: permissive}},
		},
		wantCodes: []validate.Finding{{Path: "configurations[0].ref", Code: validate.CodeInvalidConfigRef}},
		notAsked:  "/etc/cfg",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recordingResolver{m: tt.bundles}
			got := validate.ValidateBytes(t.Context(), []byte(tt.contract), fstest.MapFS{}, &validate.Options{Resolver: r})
			if diff := cmp.Diff(stripMessages(got.Errors), tt.wantCodes); diff != "" {
				t.Errorf("errors (-got +want):\n%s\nfindings: %+v", diff, got.Errors)
			}
			if slices.Contains(r.asked, tt.notAsked) {
				t.Errorf("the resolver was asked for %q (asked: %q)", tt.notAsked, r.asked)
			}
		})
	}
}
