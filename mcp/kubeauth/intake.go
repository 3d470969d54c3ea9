package kubeauth

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/mcp"
)

// TracesSubresource is the RBAC subresource that grants posting traces to
// the operator's intake: a ClusterRole rule with apiGroups kubepact.dev,
// resources servicecontracts/traces and verb create. No API serves it;
// the operator asks SubjectAccessReview about it.
const TracesSubresource = "traces"

var _ mcp.IntakeAuthorizer = (*KubeIdentity)(nil)

// MayPostTraces implements mcp.IntakeAuthorizer: id may post traces when
// it may create servicecontracts/traces cluster-wide. Observed edges are
// fleet-wide evidence, so a namespace's permission is not enough. The
// decision is cached for AccessTTL like the others.
func (k *KubeIdentity) MayPostTraces(ctx context.Context, id mcp.Identity) (bool, error) {
	who := identityKey(id)
	key := who + "\x00traces"
	if ok, hit := k.access.get(key); hit {
		return ok, nil
	}
	v, err, _ := k.flight.Do("a"+key, func() (any, error) {
		sar, err := k.authz.Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: id.User, UID: id.UID, Groups: id.Groups,
			ResourceAttributes: &authzv1.ResourceAttributes{
				Verb: "create", Group: v1alpha1.GroupVersion.Group, Resource: "servicecontracts", Subresource: TracesSubresource,
			},
		}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("SubjectAccessReview: %w", err)
		}
		allowed := sar.Status.Allowed && !sar.Status.Denied
		k.access.put(key, allowed, k.opts.AccessTTL)
		return allowed, nil
	})
	if err != nil {
		return false, err
	}
	return v.(bool), nil
}
