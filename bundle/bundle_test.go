package bundle_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/test/testregistry"
)

func examplesDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "examples", "bundles")
}

func readAll(t *testing.T, b *bundle.Bundle) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range b.FS.Paths() {
		data, err := b.FS.ReadFile(p)
		if err != nil {
			continue // a directory
		}
		out[p] = string(data)
	}
	return out
}

// TestPushedIdentity is the identity promise: a directory and its pushed
// copy are one bundle with one identity, and the pulled copy holds the same
// files.
func TestPushedIdentity(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "ci", Password: "s3cret"})
	auth := base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))
	dockerConfig := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, auth)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(dockerConfig), CacheDir: t.TempDir(), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"catalog", "orders", "payments"} {
		t.Run(name, func(t *testing.T) {
			local, err := bundle.LoadDir(filepath.Join(examplesDir(t), name), nil)
			if err != nil {
				t.Fatal(err)
			}
			again, err := bundle.LoadDir(filepath.Join(examplesDir(t), name), nil)
			if err != nil {
				t.Fatal(err)
			}
			if local.Identity != again.Identity {
				t.Fatalf("loading twice gave identities %s and %s", local.Identity, again.Identity)
			}
			img, err := local.Image()
			if err != nil {
				t.Fatal(err)
			}
			ref, err := oci.ParseReference("oci://" + reg.Host + "/examples/" + name + ":" + local.Contract.Service.Version)
			if err != nil {
				t.Fatal(err)
			}
			pushed, err := client.Push(t.Context(), ref, img)
			if err != nil {
				t.Fatalf("push: %v", err)
			}
			if pushed != local.Identity {
				t.Fatalf("registry digest %s != local identity %s", pushed, local.Identity)
			}

			remote, err := bundle.Load(t.Context(), bundle.OCIScheme+ref.String(), &bundle.LoadOptions{Client: client})
			if err != nil {
				t.Fatalf("load %s: %v", ref, err)
			}
			if remote.Identity != local.Identity {
				t.Errorf("pulled identity %s != local identity %s", remote.Identity, local.Identity)
			}
			if diff := cmp.Diff(readAll(t, local), readAll(t, remote)); diff != "" {
				t.Errorf("pulled files differ from the directory (-local +pulled):\n%s", diff)
			}
			if res := validate.Validate(t.Context(), remote.FS, &validate.Options{Resolver: bundle.ResolverFor(remote, client)}); !res.Valid() {
				t.Errorf("pulled bundle is invalid: %+v", res.Errors)
			}
		})
	}
}

// TestIgnoredFilesDoNotChangeIdentity: .pactoignore'd files and editor junk
// are not part of the bundle, so they cannot make a phantom revision.
func TestIgnoredFilesDoNotChangeIdentity(t *testing.T) {
	src := filepath.Join(examplesDir(t), "payments")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	before, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{".DS_Store", "notes.swp", ".git/HEAD"} {
		p := filepath.Join(dir, junk)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	after, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if before.Identity != after.Identity {
		t.Errorf("ignored files changed the identity: %s → %s", before.Identity, after.Identity)
	}

	if err := os.WriteFile(filepath.Join(dir, "docs", "extra.md"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Identity == before.Identity {
		t.Error("adding a bundle file did not change the identity")
	}
}

func TestResolverLocalAndRemote(t *testing.T) {
	reg := testregistry.New(t, nil)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	// A policy bundle in the registry and one beside the referring bundle.
	root := t.TempDir()
	policy := "pactoVersion: \"2.0\"\nservice:\n  name: baseline\n  version: 1.0.0\npolicies:\n  - name: baseline\n    schema: policy/schema.json\n"
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["state"]}`
	for _, d := range []string{"baseline", "svc"} {
		if err := os.MkdirAll(filepath.Join(root, d, "policy"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(root, "baseline", "pacto.yaml"), policy)
	mustWrite(t, filepath.Join(root, "baseline", "policy", "schema.json"), schema)
	pol, err := bundle.LoadDir(filepath.Join(root, "baseline"), nil)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := pol.Image()
	ref, _ := oci.ParseReference("oci://" + reg.Host + "/policies/baseline:1.0.0")
	if _, err := client.Push(t.Context(), ref, img); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		policyRef string
		withState bool
		wantCodes []string
	}{
		{"oci ref enforced, violated", bundle.OCIScheme + ref.String(), false, []string{"POLICY_VIOLATION"}},
		{"oci ref enforced, met", bundle.OCIScheme + ref.String(), true, nil},
		{"local ref enforced, violated", "../baseline", false, []string{"POLICY_VIOLATION"}},
		{"local ref enforced, met", "file://../baseline", true, nil},
		{"unresolvable ref fails closed", "oci://" + reg.Host + "/policies/missing:1.0.0", true, []string{"POLICY_REF_UNRESOLVED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\npolicies:\n  - name: baseline\n    ref: " + tt.policyRef + "\n"
			if tt.withState {
				c += "state:\n  type: stateless\n  persistence: {scope: local, durability: ephemeral}\n  dataCriticality: low\n"
			}
			mustWrite(t, filepath.Join(root, "svc", "pacto.yaml"), c)
			b, err := bundle.LoadDir(filepath.Join(root, "svc"), nil)
			if err != nil {
				t.Fatal(err)
			}
			res := validate.Validate(t.Context(), b.FS, &validate.Options{Resolver: bundle.ResolverFor(b, client)})
			var got []string
			for _, f := range res.Errors {
				got = append(got, f.Code)
			}
			if diff := cmp.Diff(tt.wantCodes, got); diff != "" {
				t.Errorf("error codes (-want +got):\n%s\nfindings: %+v", diff, res.Errors)
			}
		})
	}
}

func TestResolverRefusesLocalRefsFromPulledBundles(t *testing.T) {
	r := bundle.NewResolver(&bundle.ResolverOptions{})
	_, err := r.Resolve(t.Context(), "../../etc")
	if err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("local ref without a base dir: got %v, want a refusal", err)
	}
	_, err = r.Resolve(t.Context(), "oci://127.0.0.1:1/x:1")
	if err == nil || !strings.Contains(err.Error(), "no registry access") {
		t.Fatalf("oci ref without a client: got %v, want a refusal", err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolverConfinedToRoot(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "pacto.yaml"), "pactoVersion: \"2.0\"\nservice:\n  name: outside\n  version: 1.0.0\n")
	inside := filepath.Join(root, "policy")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(inside, "pacto.yaml"), "pactoVersion: \"2.0\"\nservice:\n  name: inside\n  version: 1.0.0\n")
	if err := os.Symlink(outside, filepath.Join(root, "sneaky")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r := bundle.NewResolver(&bundle.ResolverOptions{BaseDir: filepath.Join(root, "svc"), Root: root})

	if _, err := r.Resolve(t.Context(), "../policy"); err != nil {
		t.Errorf("a reference inside the root: %v", err)
	}
	for _, ref := range []string{"../../" + filepath.Base(outside), outside, "../sneaky", "file://" + outside} {
		if _, err := r.Resolve(t.Context(), ref); err == nil || !strings.Contains(err.Error(), "may not leave") {
			t.Errorf("Resolve(%q) = %v; want a refusal to leave the root", ref, err)
		}
	}
}

// TestLoadDirChecksLimitsBeforePacking: a directory's files are held to the
// archive limits before any of them is read, so an oversized file is refused
// at once instead of being compressed into memory first (a few GiB of it
// took seconds of CPU and, with incompressible data, as much memory).
func TestLoadDirChecksLimitsBeforePacking(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		lim   archive.Limits
		want  string
	}{{
		name: "file over the per-file limit",
		setup: func(t *testing.T, dir string) {
			f, err := os.Create(filepath.Join(dir, "huge.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(8 << 30); err != nil { // sparse: nothing on disk
				t.Skipf("sparse files unavailable: %v", err)
			}
		},
		want: `"huge.bin"`,
	}, {
		name: "files over the total limit",
		setup: func(t *testing.T, dir string) {
			for i := range 3 {
				mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%d", i)), strings.Repeat("x", 600))
			}
		},
		lim:  archive.Limits{MaxFileBytes: 1 << 10, MaxTotalBytes: 1 << 10},
		want: "total limit",
	}, {
		name: "too many entries",
		setup: func(t *testing.T, dir string) {
			for i := range 5 {
				mustWrite(t, filepath.Join(dir, fmt.Sprintf("f%d", i)), "x")
			}
		},
		lim:  archive.Limits{MaxEntries: 4},
		want: "more than 4 entries",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "pacto.yaml"), "pactoVersion: \"2.0\"\nservice:\n  name: a\n  version: 1.0.0\n")
			tt.setup(t, dir)
			start := time.Now()
			_, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: tt.lim})
			if err == nil || !errors.Is(err, archive.ErrLimit) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadDir: got %v, want an archive.ErrLimit error containing %s", err, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("LoadDir took %s to refuse an oversized bundle; the limits must be checked before packing", d)
			}
		})
	}
}
