package hooks

import (
	"github.com/stackdome/stackdome/metacontroller"
)

// Customize answers the customize hook: the app's pods, by the labels its
// workload selects them with, in the parent's namespace. It is a function of
// the parent's name only, because Metacontroller caches the answer per
// generation; it never answers a rule without a selector, which would
// select every pod in the namespace.
func Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	p, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	return &metacontroller.CustomizeResponse{RelatedResources: []metacontroller.RelatedResourceRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		LabelSelector: &metacontroller.LabelSelector{MatchLabels: selector(p.Metadata.Name)},
	}}}, nil
}
