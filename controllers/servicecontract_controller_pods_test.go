package controllers_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/controllers/injection"
)

func injectedPod(name, digest string) metav1.PartialObjectMetadata {
	ann := map[string]string{injection.AnnotationContract: "catalog"}
	if digest != "" {
		ann[injection.AnnotationBundleDigest] = digest
		ann[injection.AnnotationToolSurface] = "surface-of-" + digest
	}
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}}
}

// TestPodsReport is the report's pure function, case by case: the current
// digest first, stale digests marked, bounded names and digests with
// counts that cover every Pod.
func TestPodsReport(t *testing.T) {
	deleting := injectedPod("going", "old")
	deleting.DeletionTimestamp = &metav1.Time{}
	var many []metav1.PartialObjectMetadata
	for i := range 12 {
		many = append(many, injectedPod(fmt.Sprintf("p%02d", i), "new"))
	}
	var spread []metav1.PartialObjectMetadata
	for i := range 10 {
		spread = append(spread, injectedPod(fmt.Sprintf("q%d", i), fmt.Sprintf("d%d", i)))
	}
	tests := []struct {
		name    string
		current string
		pods    []metav1.PartialObjectMetadata
		want    *v1alpha1.PodsStatus
	}{
		{name: "no Pods", current: "new", want: nil},
		{name: "all current", current: "new", pods: []metav1.PartialObjectMetadata{injectedPod("b", "new"), injectedPod("a", "new")},
			want: &v1alpha1.PodsStatus{Total: 2, Digests: []v1alpha1.DigestPods{{Digest: "new", Current: true, ToolSurfaceDigest: "surface-of-new", Count: 2, Pods: []string{"a", "b"}}}}},
		{name: "a stale Pod after a tag move", current: "new", pods: []metav1.PartialObjectMetadata{injectedPod("x", "old"), injectedPod("y", "new"), deleting},
			want: &v1alpha1.PodsStatus{Total: 2, Stale: 1, Digests: []v1alpha1.DigestPods{
				{Digest: "new", Current: true, ToolSurfaceDigest: "surface-of-new", Count: 1, Pods: []string{"y"}},
				{Digest: "old", ToolSurfaceDigest: "surface-of-old", Count: 1, Pods: []string{"x"}},
			}}},
		{name: "no digest annotation", current: "new", pods: []metav1.PartialObjectMetadata{injectedPod("z", "")},
			want: &v1alpha1.PodsStatus{Total: 1, Stale: 1, Digests: []v1alpha1.DigestPods{{Digest: "unknown", Count: 1, Pods: []string{"z"}}}}},
		{name: "contract not resolved: nothing is current", current: "", pods: []metav1.PartialObjectMetadata{injectedPod("a", "new")},
			want: &v1alpha1.PodsStatus{Total: 1, Stale: 1, Digests: []v1alpha1.DigestPods{{Digest: "new", ToolSurfaceDigest: "surface-of-new", Count: 1, Pods: []string{"a"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := controllers.PodsReport(tt.current, tt.pods)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("report (-got +want):\n%s", diff)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		got := controllers.PodsReport("new", many)
		if got.Total != 12 || got.Digests[0].Count != 12 || len(got.Digests[0].Pods) != v1alpha1.MaxPodNames || got.Digests[0].Pods[0] != "p00" {
			t.Errorf("12 Pods on one digest: %+v, want total and count 12 and the first %d names", got, v1alpha1.MaxPodNames)
		}
		got = controllers.PodsReport("d9", spread)
		if got.Total != 10 || got.Stale != 9 || len(got.Digests) != v1alpha1.MaxPodDigests || got.Digests[0].Digest != "d9" || !got.Digests[0].Current {
			t.Errorf("10 digests: %+v, want total 10, stale 9, %d digests, the current first", got, v1alpha1.MaxPodDigests)
		}
	})
}
