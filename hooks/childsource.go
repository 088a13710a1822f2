package hooks

import (
	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// childSource is the pipeline's seam for the children: what package children
// builds of a spec (its own children and their pod template's revision, which
// follow the config digest) and of the observed wiring (the routing children).
// rawSpec is the spec as the request carries it, spec its defaulted decoding; a
// source may key on rawSpec, never answer differently for the same arguments.
type childSource interface {
	own(cfg children.Config, ns, name string, rawSpec []byte, spec schema.Spec, cl children.Claims, digest string) (revision string, _ childList, _ error)
	routing(cfg children.Config, name string, rawSpec []byte, spec schema.Spec, v observed.Wiring) (childList, error)
}

// freshChildren is the source of Sync: every child built for each sync, as
// objects.
type freshChildren struct{}

// own is the childSource's own: the children of the spec, built.
func (freshChildren) own(cfg children.Config, ns, name string, _ []byte, spec schema.Spec, cl children.Claims, digest string) (string, childList, error) {
	d, err := buildOwn(cfg, ns, name, spec, cl, digest)
	if err != nil {
		return "", childList{}, err
	}
	return d.Revision, childList{objects: d.Children, refs: children.Refs(d.Children)}, nil
}

// buildOwn is children.Build and then the NetworkPolicy, the one child of
// the spec that also depends on the namespace ns.
func buildOwn(cfg children.Config, ns, name string, spec schema.Spec, cl children.Claims, digest string) (children.Desired, error) {
	d, err := children.Build(cfg, name, spec, cl, digest)
	if err != nil {
		return d, err
	}
	np, err := children.NetworkPolicies(cfg, ns, name, spec)
	if err != nil {
		return d, err
	}
	d.Children = append(d.Children, np...)
	return d, nil
}

// routing is the childSource's routing: the routing children, built.
func (freshChildren) routing(cfg children.Config, name string, _ []byte, spec schema.Spec, v observed.Wiring) (childList, error) {
	objs, err := children.Routing(cfg, name, spec, v)
	return childList{objects: objs, refs: children.Refs(objs)}, err
}
