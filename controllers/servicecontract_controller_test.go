package controllers_test

import (
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// writeBundle writes a small bundle directory; extra is appended to its
// pacto.yaml.
func writeBundle(t testing.TB, name, version, extra string) string {
	t.Helper()
	dir := t.TempDir()
	doc := "pactoVersion: \"2.0\"\nservice:\n  name: " + name + "\n  version: " + version + "\n  owner:\n    team: team-" + name + "\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestValidBundleByDigest(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	d := envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), filepath.Join("..", "examples", "bundles", "catalog"), reg.Host+"/bundles/catalog:1.4.0")
	createDeployment(t, ns, "catalog")
	sc := envtestsuite.NewContract(ns, "catalog", "oci://"+reg.Host+"/bundles/catalog@"+string(d), "catalog")
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "Ready", readyForWait)
	if got.Status.Digest != string(d) {
		t.Errorf("digest %q, want %q", got.Status.Digest, d)
	}
	if c := got.Status.Contract; c == nil || c.Service != "catalog" || c.Version != "1.4.0" || c.Owner != "commerce-catalog" || !slices.Equal(c.Interfaces, []string{"http"}) {
		t.Errorf("contract summary %+v", got.Status.Contract)
	}
	for _, typ := range []string{v1alpha1.ConditionBundleResolved, v1alpha1.ConditionContractValid, v1alpha1.ConditionTargetBound} {
		if s, r := envtestsuite.Condition(got, typ); s != metav1.ConditionTrue || r != v1alpha1.ReasonSucceeded {
			t.Errorf("%s = %s/%s, want True/Succeeded", typ, s, r)
		}
	}
	for _, typ := range []string{v1alpha1.ConditionReconciling, v1alpha1.ConditionStalled} {
		if s, _ := envtestsuite.Condition(got, typ); s != "" {
			t.Errorf("%s present (%s) on a Ready object; kstatus reads it as not current", typ, s)
		}
	}
	if got.Status.LastResolvedAt == nil {
		t.Error("lastResolvedAt not set")
	}
}

func TestTagIsPinnedToDigest(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	d := envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), writeBundle(t, "orders", "2.0.0", ""), reg.Host+"/bundles/orders:2")
	createDeployment(t, ns, "orders")
	sc := envtestsuite.NewContract(ns, "orders", "oci://"+reg.Host+"/bundles/orders:2", "orders")
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "Ready", readyForWait)
	if want := reg.Host + "/bundles/orders:2@" + string(d); got.Status.ResolvedRef != want || got.Status.Digest != string(d) {
		t.Errorf("resolvedRef %q digest %q, want %q", got.Status.ResolvedRef, got.Status.Digest, want)
	}
}

func TestTagMovedIsFollowed(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	c := envtestsuite.PlainClient(t, nil)
	ref := reg.Host + "/bundles/orders:stable"
	d1 := envtestsuite.Push(t, c, writeBundle(t, "orders", "2.0.0", ""), ref)
	createDeployment(t, ns, "orders")
	sc := envtestsuite.NewContract(ns, "orders", "oci://"+ref, "orders")
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	suite.WaitFor(t, key, "Ready at the first digest", func(sc *v1alpha1.ServiceContract) bool {
		return envtestsuite.IsReady(sc) && sc.Status.Digest == string(d1)
	})

	d2 := envtestsuite.Push(t, c, writeBundle(t, "orders", "2.1.0", ""), ref)
	// Resolve again now rather than after the 30s minimum interval: any
	// spec change makes the reconciler look at the tag.
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second} })
	got := suite.WaitFor(t, key, "the new digest", func(sc *v1alpha1.ServiceContract) bool {
		return envtestsuite.IsReady(sc) && sc.Status.Digest == string(d2)
	})
	if s, r := envtestsuite.Condition(got, v1alpha1.ConditionBundleResolved); s != metav1.ConditionTrue || r != v1alpha1.ReasonTagMoved {
		t.Errorf("BundleResolved = %s/%s, want True/%s", s, r, v1alpha1.ReasonTagMoved)
	}
	if got.Status.Contract == nil || got.Status.Contract.Version != "2.1.0" {
		t.Errorf("summary %+v, want version 2.1.0", got.Status.Contract)
	}
	waitForEvent(t, ns, sc.Name, v1alpha1.ReasonTagMoved)
}

func waitForEvent(t *testing.T, ns, name, reason string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		reasons := suite.EventReasons(t, ns, name)
		if slices.Contains(reasons, reason) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event for %s/%s; events: %v", reason, ns, name, reasons)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestInvalidContractReportsFindings(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	// Two errors: a version that is not semver, an interface whose file is
	// missing.
	dir := writeBundle(t, "broken", "not-a-version", "interfaces:\n  - name: http\n    type: openapi\n    ref: interfaces/missing.yaml\n")
	envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), dir, reg.Host+"/bundles/broken:1")
	createDeployment(t, ns, "broken")
	sc := envtestsuite.NewContract(ns, "broken", "oci://"+reg.Host+"/bundles/broken:1", "broken")
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "ContractValid=False", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionContractValid)
		return s == metav1.ConditionFalse && sc.Status.ObservedGeneration == sc.Generation
	})
	if _, r := envtestsuite.Condition(got, v1alpha1.ConditionContractValid); r != v1alpha1.ReasonValidationFailed {
		t.Errorf("ContractValid reason %s, want %s", r, v1alpha1.ReasonValidationFailed)
	}
	if s, r := envtestsuite.Condition(got, v1alpha1.ConditionReady); s != metav1.ConditionFalse || r != v1alpha1.ReasonValidationFailed {
		t.Errorf("Ready = %s/%s, want False/%s", s, r, v1alpha1.ReasonValidationFailed)
	}
	if s, _ := envtestsuite.Condition(got, v1alpha1.ConditionStalled); s != metav1.ConditionTrue {
		t.Errorf("Stalled = %q, want True: only a new bundle fixes it", s)
	}
	if got.Status.FindingsTotal < 1 || len(got.Status.Findings) == 0 || got.Status.Findings[0].Severity != v1alpha1.SeverityError {
		t.Fatalf("findings %+v (total %d)", got.Status.Findings, got.Status.FindingsTotal)
	}
	if readyForWait(got) {
		t.Error("kubectl wait --for=condition=Ready would succeed on an invalid contract")
	}
}

func TestUnresolvablePolicyFailsClosed(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	dir := writeBundle(t, "guarded", "1.0.0", "policies:\n  - name: baseline\n    ref: oci://"+reg.Host+"/policies/missing:1.0.0\n")
	envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), dir, reg.Host+"/bundles/guarded:1")
	createDeployment(t, ns, "guarded")
	sc := envtestsuite.NewContract(ns, "guarded", "oci://"+reg.Host+"/bundles/guarded:1", "guarded")
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "ContractValid=False", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionContractValid)
		return s == metav1.ConditionFalse
	})
	if _, r := envtestsuite.Condition(got, v1alpha1.ConditionContractValid); r != v1alpha1.ReasonPolicyUnresolved {
		t.Errorf("ContractValid reason %s, want %s", r, v1alpha1.ReasonPolicyUnresolved)
	}
	if !slices.ContainsFunc(got.Status.Findings, func(f v1alpha1.Finding) bool { return f.Code == "POLICY_REF_UNRESOLVED" }) {
		t.Errorf("findings %+v lack POLICY_REF_UNRESOLVED", got.Status.Findings)
	}
	if s, _ := envtestsuite.Condition(got, v1alpha1.ConditionReady); s != metav1.ConditionFalse {
		t.Errorf("Ready = %s, want False", s)
	}
}

func TestRegistryDownKeepsLastGood(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	proxy := newFlakyProxy(t, reg.Host)
	ref := proxy.addr() + "/bundles/orders:stable"
	d1 := envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), writeBundle(t, "orders", "2.0.0", ""), ref)
	createDeployment(t, ns, "orders")
	sc := envtestsuite.NewContract(ns, "orders", "oci://"+ref, "orders")
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	suite.WaitFor(t, key, "Ready", envtestsuite.IsReady)

	proxy.setDown(true)
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second} })
	got := suite.WaitFor(t, key, "Reconciling=True RegistryUnavailable", func(sc *v1alpha1.ServiceContract) bool {
		s, r := envtestsuite.Condition(sc, v1alpha1.ConditionReconciling)
		return s == metav1.ConditionTrue && r == v1alpha1.ReasonRegistryUnavailable && sc.Status.ObservedGeneration == sc.Generation
	})
	if got.Status.Digest != string(d1) || got.Status.Contract == nil || got.Status.Contract.Version != "2.0.0" {
		t.Errorf("last good not kept: digest %q summary %+v", got.Status.Digest, got.Status.Contract)
	}
	if s, _ := envtestsuite.Condition(got, v1alpha1.ConditionReady); s != metav1.ConditionTrue {
		t.Errorf("Ready = %s; a registry outage must leave it as it was (True)", s)
	}

	proxy.setDown(false)
	got = suite.WaitFor(t, key, "recovery", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionReconciling)
		return s == "" && envtestsuite.IsReady(sc)
	})
	if got.Status.Digest != string(d1) {
		t.Errorf("digest after recovery %q, want %q", got.Status.Digest, d1)
	}
}

func TestPrivateRegistryWithPullSecret(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, &testregistry.Options{Username: "robot", Password: "s3cret"})
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	cfg := []byte(`{"auths":{"` + reg.Host + `":{"auth":"` + auth + `"}}}`)
	ref := reg.Host + "/private/orders:1"
	d := envtestsuite.Push(t, envtestsuite.PlainClient(t, cfg), writeBundle(t, "orders", "1.0.0", ""), ref)
	createDeployment(t, ns, "orders")

	// Without the Secret's credentials the registry refuses.
	anon := envtestsuite.NewContract(ns, "anonymous", "oci://"+ref, "orders")
	suite.Create(t, anon)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(anon), "BundleResolved=False", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionBundleResolved)
		return s == metav1.ConditionFalse
	})
	if _, r := envtestsuite.Condition(got, v1alpha1.ConditionBundleResolved); r != v1alpha1.ReasonAuthenticationFailed {
		t.Errorf("anonymous pull: reason %s, want %s", r, v1alpha1.ReasonAuthenticationFailed)
	}

	// Naming a Secret that is not there yet: waiting, then Ready once it is.
	sc := envtestsuite.NewContract(ns, "orders", "oci://"+ref, "orders")
	sc.Spec.PullSecretRef = &v1alpha1.LocalObjectReference{Name: "registry-creds"}
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	suite.WaitFor(t, key, "PullSecretNotFound", func(sc *v1alpha1.ServiceContract) bool {
		_, r := envtestsuite.Condition(sc, v1alpha1.ConditionBundleResolved)
		return r == v1alpha1.ReasonPullSecretNotFound
	})
	suite.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry-creds"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	})
	// The Secret is not watched: a spec change (or the 30s requeue) brings
	// the reconciler back.
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second} })
	got = suite.WaitFor(t, key, "Ready", readyForWait)
	if got.Status.Digest != string(d) {
		t.Errorf("digest %q, want %q", got.Status.Digest, d)
	}
}

func TestMissingTargetThenCreated(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), writeBundle(t, "late", "1.0.0", ""), reg.Host+"/bundles/late:1")
	sc := envtestsuite.NewContract(ns, "late", "oci://"+reg.Host+"/bundles/late:1", "late")
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	got := suite.WaitFor(t, key, "TargetBound=False", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionTargetBound)
		return s == metav1.ConditionFalse
	})
	if _, r := envtestsuite.Condition(got, v1alpha1.ConditionTargetBound); r != v1alpha1.ReasonTargetNotFound {
		t.Errorf("TargetBound reason %s, want %s", r, v1alpha1.ReasonTargetNotFound)
	}
	if s, r := envtestsuite.Condition(got, v1alpha1.ConditionReady); s != metav1.ConditionFalse || r != v1alpha1.ReasonTargetNotFound {
		t.Errorf("Ready = %s/%s, want False/%s", s, r, v1alpha1.ReasonTargetNotFound)
	}
	if got.Status.Digest == "" {
		t.Error("the bundle was not resolved while the target was missing")
	}
	// The Deployment's creation is watched: no spec change is needed.
	createDeployment(t, ns, "late")
	suite.WaitFor(t, key, "TargetBound=True", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionTargetBound)
		return s == metav1.ConditionTrue && readyForWait(sc)
	})
	// And its deletion flips it back.
	dep := workload(ns, "late")
	if err := suite.Admin.Delete(t.Context(), dep); err != nil {
		t.Fatal(err)
	}
	suite.WaitFor(t, key, "TargetBound=False after deletion", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionTargetBound)
		return s == metav1.ConditionFalse
	})
}

func TestSuspend(t *testing.T) {
	ns := suite.NewNamespace(t)
	reg := testregistry.New(t, nil)
	c := envtestsuite.PlainClient(t, nil)
	ref := reg.Host + "/bundles/orders:stable"
	d1 := envtestsuite.Push(t, c, writeBundle(t, "orders", "2.0.0", ""), ref)
	createDeployment(t, ns, "orders")
	sc := envtestsuite.NewContract(ns, "orders", "oci://"+ref, "orders")
	suite.Create(t, sc)
	key := client.ObjectKeyFromObject(sc)
	suite.WaitFor(t, key, "Ready", envtestsuite.IsReady)

	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Suspend = true })
	d2 := envtestsuite.Push(t, c, writeBundle(t, "orders", "2.1.0", ""), ref)
	// A spec change reaches the reconciler, which must leave it alone.
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second} })
	time.Sleep(3 * time.Second)
	got := &v1alpha1.ServiceContract{}
	if err := suite.Admin.Get(t.Context(), key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Digest != string(d1) {
		t.Fatalf("suspended, yet the digest moved to %s", got.Status.Digest)
	}

	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Suspend = false })
	suite.WaitFor(t, key, "the new digest after resuming", func(sc *v1alpha1.ServiceContract) bool {
		return envtestsuite.IsReady(sc) && sc.Status.Digest == string(d2)
	})
}

func TestBundleFromConfigMap(t *testing.T) {
	ns := suite.NewNamespace(t)
	dir := filepath.Join("..", "examples", "bundles", "catalog")
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	suite.Create(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "catalog-bundle"},
		BinaryData: map[string][]byte{v1alpha1.ConfigMapBundleKey: img.Layer},
	})
	createDeployment(t, ns, "catalog")
	sc := envtestsuite.NewContract(ns, "catalog", "", "catalog")
	sc.Spec.Bundle = v1alpha1.BundleSource{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "catalog-bundle"}}
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "Ready", readyForWait)
	if got.Status.Digest != string(b.Identity) || got.Status.ResolvedRef != "configmap/catalog-bundle" {
		t.Errorf("digest %q ref %q; want the identity the bundle has once pushed, %s", got.Status.Digest, got.Status.ResolvedRef, b.Identity)
	}
}

// TestSpecValidation shows the API server itself refusing bad specs
// (the CRD's schema and CEL rules).
func TestSpecValidation(t *testing.T) {
	ns := suite.NewNamespace(t)
	cases := map[string]struct {
		change func(*v1alpha1.ServiceContract)
		want   string
	}{
		"no bundle source": {func(sc *v1alpha1.ServiceContract) { sc.Spec.Bundle = v1alpha1.BundleSource{} }, "exactly one of oci and configMapRef"},
		"both bundle sources": {func(sc *v1alpha1.ServiceContract) {
			sc.Spec.Bundle.ConfigMapRef = &v1alpha1.LocalObjectReference{Name: "x"}
		}, "exactly one of oci and configMapRef"},
		"interval under 30s":  {func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 5 * time.Second} }, "at least 30s"},
		"unknown target kind": {func(sc *v1alpha1.ServiceContract) { sc.Spec.TargetRef.Kind = "Pod" }, "Unsupported value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sc := envtestsuite.NewContract(ns, "bad-"+strings.ReplaceAll(name, " ", "-"), "oci://registry.example.com/x:1", "x")
			tc.change(sc)
			err := suite.Admin.Create(t.Context(), sc)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("create: %v; want Invalid mentioning %q", err, tc.want)
			}
		})
	}
	// The default interval is filled in by the API server.
	sc := envtestsuite.NewContract(ns, "defaulted", "oci://registry.example.com/x:1", "x")
	suite.Create(t, sc)
	if sc.Spec.Interval == nil || sc.Spec.Interval.Duration != 10*time.Minute {
		t.Errorf("interval %v, want the 10m default", sc.Spec.Interval)
	}
}

// TestRegistryFailuresInStatus: a registry failure reaches status as a
// sentence with its remedy — never the transport's, the TLS library's or
// the registry's own text. An HTTPS registry asked in plain HTTP (the
// suite's reconciler runs with --plain-http), a registry the allow-list
// does not name (on another host, which receives nothing), and a port
// nothing listens on. Each gets the reason bundle/failure's Kind maps to.
func TestRegistryFailuresInStatus(t *testing.T) {
	ns := suite.NewNamespace(t)
	tlsReg := testregistry.New(t, &testregistry.Options{TLS: true})
	foreign := testregistry.New(t, &testregistry.Options{Addr: "127.0.0.2:0"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	raw := []string{"dial tcp", "connect:", "response status code", "Client sent an HTTP request", "tls:", "x509", `Head "`, `Get "`}
	for _, tc := range []struct {
		name, registry, want, reason string
	}{
		{"tls", tlsReg.Host, "registry " + tlsReg.Host + " answered HTTP 400 (Bad Request) to plain HTTP: if it serves HTTPS, drop --plain-http (registry.plainHTTP in the chart)", v1alpha1.ReasonRegistryUnavailable},
		{"foreign", foreign.Host, "registry " + foreign.Host + " is not allowed here (allowed: 127.0.0.1): add it to --allowed-registries (registry.allowedRegistries in the chart) if you trust it", v1alpha1.ReasonRegistryNotAllowed},
		{"closed", closed, "nothing accepts connections at registry " + closed + ": check its host and port", v1alpha1.ReasonRegistryUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			createDeployment(t, ns, tc.name)
			sc := envtestsuite.NewContract(ns, tc.name, "oci://"+tc.registry+"/bundles/orders:2", tc.name)
			suite.Create(t, sc)
			got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "BundleResolved=False", func(sc *v1alpha1.ServiceContract) bool {
				s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionBundleResolved)
				return s == metav1.ConditionFalse
			})
			if _, r := envtestsuite.Condition(got, v1alpha1.ConditionBundleResolved); r != tc.reason {
				t.Errorf("BundleResolved reason %s, want %s", r, tc.reason)
			}
			for _, c := range got.Status.Conditions {
				if c.Status == metav1.ConditionTrue && c.Type != v1alpha1.ConditionReconciling {
					continue
				}
				if !strings.Contains(c.Message, tc.want) {
					t.Errorf("%s: %q, want it to say %q", c.Type, c.Message, tc.want)
				}
				for _, r := range raw {
					if strings.Contains(c.Message, r) {
						t.Errorf("%s: %q carries raw text %q", c.Type, c.Message, r)
					}
				}
			}
		})
	}
	if got := foreign.Requests(); len(got) != 0 {
		t.Errorf("the registry the allow-list does not name received %v, want nothing", got)
	}
}
