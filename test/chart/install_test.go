package chart

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestInstallUpgradeUninstall installs the chart with real helm into the
// real API server, upgrades it, and uninstalls it: the README's promises
// that an upgrade changes the release in place, that helm leaves the CRDs
// in crds/ alone, and that uninstall removes everything else.
func TestInstallUpgradeUninstall(t *testing.T) {
	needControlPlane(t)
	const ns = "kubepact-install"
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	kc := []string{"--kubeconfig", kubeconfig, "--namespace", ns}
	if out, err := helm(t, append([]string{"install", releaseName, chartDir, "--create-namespace"}, kc...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx := t.Context()
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after install: %v", err)
	}
	if got := *d.Spec.Replicas; got != 2 {
		t.Errorf("installed replicas = %d, want 2", got)
	}
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kubepact-injector", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after install: %v", err)
	}
	for _, w := range mwc.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Namespace != ns {
			t.Errorf("webhook %s calls %+v, want the Service in %s", w.Name, w.ClientConfig.Service, ns)
		}
	}

	if out, err := helm(t, append([]string{"upgrade", releaseName, chartDir, "--reuse-values", "--set", "replicaCount=3"}, kc...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d, err = cs.AppsV1().Deployments(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{}); err != nil {
		t.Fatalf("after upgrade: %v", err)
	} else if got := *d.Spec.Replicas; got != 3 {
		t.Errorf("upgraded replicas = %d, want 3", got)
	}

	if out, err := helm(t, append([]string{"uninstall", releaseName, "--wait"}, kc...)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	gone := map[string]error{}
	_, gone["Deployment"] = cs.AppsV1().Deployments(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{})
	_, gone["ServiceAccount"] = cs.CoreV1().ServiceAccounts(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{})
	_, gone["Service kubepact-webhook"] = cs.CoreV1().Services(ns).Get(ctx, "kubepact-webhook", metav1.GetOptions{})
	_, gone["ClusterRole"] = cs.RbacV1().ClusterRoles().Get(ctx, "kubepact-operator", metav1.GetOptions{})
	_, gone["ClusterRoleBinding"] = cs.RbacV1().ClusterRoleBindings().Get(ctx, "kubepact-operator", metav1.GetOptions{})
	_, gone["Role leader-election"] = cs.RbacV1().Roles(ns).Get(ctx, "kubepact-leader-election", metav1.GetOptions{})
	_, gone["MutatingWebhookConfiguration"] = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kubepact-injector", metav1.GetOptions{})
	_, gone["NetworkPolicy"] = cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{})
	_, gone["PodDisruptionBudget"] = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "kubepact-operator", metav1.GetOptions{})
	for what, err := range gone {
		if !apierrors.IsNotFound(err) {
			t.Errorf("after uninstall, %s: %v (want not found)", what, err)
		}
	}
	// Helm never deletes what it installed from crds/.
	crd := apiextensionsGVR()
	if _, err := dynamicClient(t).Resource(crd).Get(ctx, "servicecontracts.kubepact.dev", metav1.GetOptions{}); err != nil {
		t.Errorf("after uninstall the CRD is gone (helm keeps crds/): %v", err)
	}
}
