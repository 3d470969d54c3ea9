package controllers

import (
	"errors"
	"fmt"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// watchedObjects are the informers SetupWithManager's controller reads from:
// ServiceContracts in full, workloads and Services as metadata only.
func watchedObjects() []client.Object {
	meta := func(gv, kind string) client.Object {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: gv, Kind: kind}}
	}
	return []client.Object{
		&v1alpha1.ServiceContract{},
		meta(appsv1.SchemeGroupVersion.String(), "Deployment"),
		meta(appsv1.SchemeGroupVersion.String(), "StatefulSet"),
		meta(appsv1.SchemeGroupVersion.String(), "DaemonSet"),
		meta(corev1.SchemeGroupVersion.String(), "Service"),
	}
}

// InformersSynced is a readiness check: ready once the informer of every
// kind the ServiceContract controller watches has synced. Asking the cache
// as a whole is not enough: before the controller has started its watches
// the cache holds no informers and calls itself synced.
//
// The check never blocks; it gets (creating if need be) the same informers
// the controller uses, so it adds no watch of its own.
func InformersSynced(c cache.Cache) healthz.Checker {
	objs := watchedObjects()
	return func(req *http.Request) error {
		var errs []error
		for _, obj := range objs {
			inf, err := c.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				errs = append(errs, fmt.Errorf("informer for %T: %w", obj, err))
				continue
			}
			if !inf.HasSynced() {
				errs = append(errs, fmt.Errorf("informer for %s has not synced yet", kindOf(obj)))
			}
		}
		return errors.Join(errs...)
	}
}

func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return v1alpha1.ServiceContractKind
}
