//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// relatedRule is a customize answer's rule, as Metacontroller v4.17.2 reads it
// (RelatedResourceRule, metacontroller/metacontroller@v4.17.2
// pkg/apis/metacontroller/v1alpha1/types.go).
type relatedRule struct {
	APIVersion    string   `json:"apiVersion"`
	Resource      string   `json:"resource"`
	Namespace     string   `json:"namespace"`
	Names         []string `json:"names"`
	LabelSelector *struct {
		MatchLabels      map[string]string `json:"matchLabels"`
		MatchExpressions []any             `json:"matchExpressions"`
	} `json:"labelSelector"`
	NamespaceSelector any `json:"namespaceSelector"`
}

// relatedObjects lists what one rule selects for a parent in parentNS, for a
// customize hook at version, the way Metacontroller's customize manager does
// (pkg/controller/common/customize/manager.go: determineSelectionType,
// matchesRelatedRule): names and a selector together, or namespace and
// namespaceSelector together, are errors; under hook version v1 a namespaced
// parent sees only its own namespace; under v2 a rule without namespace
// selects from every namespace (so a rule meant for the parent's namespace
// must say so); a rule with neither selector, namespace nor names selects
// everything, which this harness refuses as the bug it is.
func (m *metacontroller) relatedObjects(ctx context.Context, version, parentNS, kind string, r relatedRule) ([]obj, error) {
	hasSelector := r.LabelSelector != nil
	switch {
	case len(r.Names) > 0 && hasSelector:
		return nil, fmt.Errorf("related rule %+v: names and labelSelector together", r)
	case r.Namespace != "" && r.NamespaceSelector != nil:
		return nil, fmt.Errorf("related rule %+v: namespace and namespaceSelector together", r)
	case r.NamespaceSelector != nil:
		return nil, fmt.Errorf("related rule %+v: namespaceSelector is not emulated here", r)
	case !hasSelector && r.Namespace == "" && len(r.Names) == 0:
		return nil, fmt.Errorf("related rule %+v selects every %s in the cluster", r, r.Resource)
	case version == "v1" && r.Namespace != "" && r.Namespace != parentNS:
		return nil, fmt.Errorf("related rule asks for namespace %q: hook v1 allows only the parent's", r.Namespace)
	}
	if hasSelector && len(r.LabelSelector.MatchExpressions) > 0 {
		return nil, errors.New("related rule with matchExpressions: not emulated here")
	}
	ns := r.Namespace
	if ns == "" && version == "v1" {
		ns = parentNS
	}
	path, err := m.collectionPath(ctx, r.APIVersion, kind, ns)
	if err != nil {
		return nil, err
	}
	var sel []string
	if hasSelector {
		for k, v := range r.LabelSelector.MatchLabels {
			sel = append(sel, k+"="+v)
		}
		sort.Strings(sel)
	}
	items, err := listItems(ctx, path, strings.Join(sel, ","))
	if err != nil {
		return nil, err
	}
	if len(r.Names) == 0 {
		return items, nil
	}
	var out []obj
	for _, it := range items {
		if slices.Contains(r.Names, dig(it, "metadata", "name").(string)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// collectionPath is the list path of kind in ns, or across every namespace
// when ns is empty.
func (m *metacontroller) collectionPath(ctx context.Context, apiVersion, kind, ns string) (string, error) {
	if ns != "" {
		return m.kube.resourcePath(ctx, apiVersion, kind, ns, "")
	}
	// resourcePath insists on a namespace for a namespaced kind; the
	// cluster-wide list is the same path without /namespaces/<ns>.
	p, err := m.kube.resourcePath(ctx, apiVersion, kind, "-", "")
	if err != nil {
		return "", err
	}
	return strings.Replace(p, "/namespaces/-/", "/", 1), nil
}
