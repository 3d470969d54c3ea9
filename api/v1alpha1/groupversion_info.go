package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of this package's kinds.
var GroupVersion = schema.GroupVersion{Group: "kubepact.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers this package's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ServiceContract{}, &ServiceContractList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
