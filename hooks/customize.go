package hooks

import (
	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// Customize answers the customize hook, which the chart registers at hook
// version v2 so that a namespaced parent may relate an object of another
// namespace:
//
//   - the app's pods, by the labels its workload selects them with, in the
//     parent's namespace (named: under v2 a rule without a namespace selects
//     from every namespace);
//
//   - when the spec has public ports with error pages and the wiring mirrors
//     the chart's error-page Service (not CrossNamespace), that Service, by
//     namespace and name: its ClusterIP goes into the resource's own
//     EndpointSlice (children/wiring.go). A Service is written when its spec or labels
//     change, not when stackdome's pods roll out, so this relation resyncs
//     no parent on a rollout;
//
//   - when the spec has public ports and names its own Traefik Middlewares
//     (spec.middlewares), those, by name in the parent's namespace: a route
//     refers to each only once it is related, i.e. exists, because Traefik
//     disables a route referring to a Middleware it cannot find;
//
//   - when the spec is valid and uses ConfigMaps or Secrets (files, envFrom,
//     env[].valueFrom), those, by name in the parent's namespace, one rule
//     per kind: their content's digest goes into the pod template, so a
//     change of it rolls the pods, and a missing one is named in status.
//     Only named objects are related: Metacontroller's related informers
//     are cluster-wide per kind, and a rule without names would send every
//     Secret of the namespace to the hook. A kind of c.Unrelated gets no
//     rule: Metacontroller then watches no object of it at all.
//
//   - for a type CronJob, the Jobs its CronJob creates, by the same labels
//     in the parent's namespace (their job template carries them): status
//     reads the last schedule and the last successful and failed run from
//     them, and the crash from their pods, already related by the first
//     rule (customize_batch.go says what it costs).
//
// It is a function of the parent's name, namespace and spec, because
// Metacontroller caches the answer per generation; it never answers a rule
// without a selector, namespace or names, which would select everything.
func (c Config) Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	c = c.withDefaults()
	p, err := observed.DecodeParent(req.Parent)
	if err != nil {
		return nil, malformed(err)
	}
	rules := []metacontroller.RelatedResourceRule{{
		APIVersion:    "v1",
		Resource:      "pods",
		Namespace:     p.Metadata.Namespace,
		LabelSelector: &metacontroller.LabelSelector{MatchLabels: children.Selector(p.Metadata.Name)},
	}}
	if p.SpecErr == nil && schema.Default(p.Spec).WantsErrorPages() && !c.NoErrorService && !c.ErrorService.CrossNamespace {
		rules = append(rules, metacontroller.RelatedResourceRule{
			APIVersion: "v1",
			Resource:   "services",
			Namespace:  c.ErrorService.Namespace,
			Names:      []string{c.ErrorService.Name},
		})
	}
	if spec, err := validSpec(p); err == nil && len(spec.PublicPorts()) > 0 && len(spec.Middlewares) > 0 {
		rules = append(rules, metacontroller.RelatedResourceRule{
			APIVersion: "traefik.io/v1alpha1",
			Resource:   "middlewares",
			Namespace:  p.Metadata.Namespace,
			Names:      spec.MiddlewareNames(),
		})
	}
	if spec, err := validSpec(p); err == nil {
		for _, k := range []struct{ kind, resource string }{{schema.KindConfigMap, "configmaps"}, {schema.KindSecret, "secrets"}} {
			if names := spec.ConfigNames(k.kind); len(names) > 0 && !c.Unrelated.Kind(k.kind) {
				rules = append(rules, metacontroller.RelatedResourceRule{
					APIVersion: "v1",
					Resource:   k.resource,
					Namespace:  p.Metadata.Namespace,
					Names:      names,
				})
			}
		}
	}
	if p.SpecErr == nil && p.Spec.Type == schema.TypeCronJob {
		rules = append(rules, cronJobRuns(p))
	}
	return &metacontroller.CustomizeResponse{RelatedResources: rules}, nil
}
