package controllers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/test/bigspec"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// wideAPI is a generated API with more read operations than
// `--tool-mode auto` lists one by one (openapitools.AutoDiscoverTools), so
// that auto settles to discover.
var wideAPI = bigspec.Shape{Resources: 30, Schemas: 40, DescriptionWords: 8}

// writeWideBundle writes the wideAPI bundle to a new directory.
func writeWideBundle(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range bigspec.WriteBundle(wideAPI) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// surfacesOf is status.toolSurfaces as a map from mode to digest.
func surfacesOf(sc *v1alpha1.ServiceContract) map[string]string {
	out := map[string]string{}
	for _, s := range sc.Status.ToolSurfaces {
		out[s.Mode] = s.Digest
	}
	return out
}

// TestToolSurfacePerMode: the reconciler records the tool surface of every
// tool mode the webhook accepts, each the one sidecar.ToolSurface computes
// for the sidecar's configuration in that mode, and auto's is the surface
// of the mode auto settles to for the bundle: all for the catalog's three
// operations, discover for an API wider than auto lists one by one.
// toolSurfaceDigest stays mode all's.
func TestToolSurfacePerMode(t *testing.T) {
	reg := testregistry.New(t, nil)
	oc := envtestsuite.PlainClient(t, nil)
	for _, tc := range []struct {
		name, dir string
		autoIs    string
	}{
		{name: "catalog", dir: filepath.Join("..", "examples", "bundles", "catalog"), autoIs: "all"},
		{name: "wide", dir: writeWideBundle(t), autoIs: "discover"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := suite.NewNamespace(t)
			d := envtestsuite.Push(t, oc, tc.dir, reg.Host+"/bundles/"+tc.name+":1")
			createDeployment(t, ns, tc.name)
			sc := envtestsuite.NewContract(ns, tc.name, "oci://"+reg.Host+"/bundles/"+tc.name+":1", tc.name)
			suite.Create(t, sc)
			got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "Ready with every mode's tool surface", func(sc *v1alpha1.ServiceContract) bool {
				return readyForWait(sc) && len(sc.Status.ToolSurfaces) == len(injection.ToolModes)
			})
			b, err := bundle.LoadDir(tc.dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b.Identity != d {
				t.Fatalf("the directory's identity %s is not the pushed digest %s", b.Identity, d)
			}
			want := map[string]string{}
			var order []string
			for _, mode := range injection.ToolModes {
				port := int32(8080)
				if c := got.Status.Contract; c != nil && c.HTTPPort > 0 {
					port = c.HTTPPort
				}
				cfg := injection.SidecarOptions{ToolMode: mode}.Config("oci://"+reg.Host+"/bundles/"+tc.name+"@"+string(d), string(d), port)
				if want[mode], err = sidecar.ToolSurface(t.Context(), cfg, b); err != nil {
					t.Fatalf("mode %s: %v", mode, err)
				}
				order = append(order, mode)
			}
			if diff := cmp.Diff(surfacesOf(got), want); diff != "" {
				t.Errorf("status.toolSurfaces (-got +want):\n%s", diff)
			}
			var modes []string
			for _, s := range got.Status.ToolSurfaces {
				modes = append(modes, s.Mode)
			}
			if diff := cmp.Diff(modes, order); diff != "" {
				t.Errorf("status.toolSurfaces' order (-got +want):\n%s", diff)
			}
			if want["all"] == want["discover"] {
				t.Errorf("modes all and discover have the same surface %s: the modes are not told apart", want["all"])
			}
			if got.Status.ToolSurfaceDigest != want["all"] {
				t.Errorf("toolSurfaceDigest %s, want mode all's %s", got.Status.ToolSurfaceDigest, want["all"])
			}
			if want["auto"] != want[tc.autoIs] {
				t.Errorf("auto's surface %s is not that of %s (%s), which auto settles to for %s", want["auto"], tc.autoIs, want[tc.autoIs], tc.name)
			}
		})
	}
}

// TestToolSurfaceEditedStatusIsOverwritten: wrong digests a user writes
// into the status are replaced by the computed ones on the next
// reconcile, an entry the user dropped comes back and one the API refuses
// (an unknown mode, a digest that is not one, a fourth entry) never lands.
func TestToolSurfaceEditedStatusIsOverwritten(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), filepath.Join("..", "examples", "bundles", "catalog"), reg.Host+"/bundles/catalog:1")
	createDeployment(t, ns, "catalog")
	sc := envtestsuite.NewContract(ns, "catalog", "oci://"+reg.Host+"/bundles/catalog:1", "catalog")
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	good := suite.WaitFor(t, key, "every mode's tool surface", func(sc *v1alpha1.ServiceContract) bool {
		return readyForWait(sc) && len(sc.Status.ToolSurfaces) == len(injection.ToolModes)
	})
	want := good.Status.DeepCopy()

	wrong := "sha256:" + strings.Repeat("e", 64)
	for _, bad := range []struct {
		name     string
		surfaces []v1alpha1.ToolSurface
		err      string
	}{
		{name: "an unknown mode", surfaces: []v1alpha1.ToolSurface{{Mode: "everything", Digest: wrong}}, err: "Unsupported value"},
		{name: "a digest that is not one", surfaces: []v1alpha1.ToolSurface{{Mode: "all", Digest: "sha256:" + strings.Repeat("x", 2000)}}, err: "toolSurfaces[0].digest"},
		{name: "a mode twice", surfaces: []v1alpha1.ToolSurface{{Mode: "all", Digest: wrong}, {Mode: "all", Digest: wrong}}, err: "Duplicate value"},
		{name: "four entries", surfaces: []v1alpha1.ToolSurface{{Mode: "all", Digest: wrong}, {Mode: "discover", Digest: wrong}, {Mode: "auto", Digest: wrong}, {Mode: "auto", Digest: wrong}}, err: "toolSurfaces"},
	} {
		edited := good.DeepCopy()
		edited.Status.ToolSurfaces = bad.surfaces
		err := suite.Admin.Status().Update(t.Context(), edited)
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("a status with %s: %v, want a refusal saying %q", bad.name, err, bad.err)
		}
	}

	edited := good.DeepCopy()
	edited.Status.ToolSurfaceDigest = wrong
	edited.Status.ToolSurfaces = []v1alpha1.ToolSurface{{Mode: "all", Digest: wrong}, {Mode: "auto", Digest: wrong}}
	if err := suite.Admin.Status().Update(t.Context(), edited); err != nil {
		t.Fatal(err)
	}
	// A status edit is no spec change; the next reconcile (here a spec
	// change, else the interval) computes the status again.
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 11 * time.Minute} })
	got := suite.WaitFor(t, key, "the computed tool surfaces back", func(sc *v1alpha1.ServiceContract) bool {
		return readyForWait(sc) && sc.Status.ToolSurfaceDigest != wrong
	})
	if diff := cmp.Diff(got.Status.ToolSurfaces, want.ToolSurfaces); diff != "" || got.Status.ToolSurfaceDigest != want.ToolSurfaceDigest {
		t.Errorf("after the user's edit, toolSurfaceDigest %s (want %s), toolSurfaces (-got +want):\n%s", got.Status.ToolSurfaceDigest, want.ToolSurfaceDigest, diff)
	}
}
