//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// How an object's apiVersion and kind become its REST path: discovery, as a
// client's RESTMapper does it.

// ResourcePath maps apiVersion/kind to the REST path of a named object (name
// may be empty for the collection), through the API server's discovery, so a
// kind the server does not serve is an error here rather than a 404 later.
func (k *Kube) ResourcePath(ctx context.Context, apiVersion, kind, namespace, name string) (string, error) {
	m, err := k.mapping(ctx, apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	if m.namespaced {
		if namespace == "" {
			return "", fmt.Errorf("%s %s is namespaced: no namespace given", apiVersion, kind)
		}
		p += "/namespaces/" + namespace
	}
	p += "/" + m.plural
	if name != "" {
		p += "/" + name
	}
	return p, nil
}

// ObjectPath is resourcePath for an object's own apiVersion, kind and name;
// namespace is used when the kind is namespaced.
func (k *Kube) ObjectPath(ctx context.Context, o Obj, namespace string) (string, error) {
	apiVersion, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	name, _ := Dig(o, "metadata", "name").(string)
	if apiVersion == "" || kind == "" || name == "" {
		return "", fmt.Errorf("object without apiVersion, kind or metadata.name: %v", o)
	}
	return k.ResourcePath(ctx, apiVersion, kind, namespace, name)
}

type restMapping struct {
	plural     string
	namespaced bool
}

// mapping reads the discovery document of apiVersion (cached; a miss is
// re-read, since CRDs appear while the suite runs).
func (k *Kube) mapping(ctx context.Context, apiVersion, kind string) (restMapping, error) {
	k.discoveryMu.Lock()
	defer k.discoveryMu.Unlock()
	if m, ok := k.discovery[apiVersion][kind]; ok {
		return m, nil
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := k.Do(ctx, http.MethodGet, p, "", nil, &list); err != nil {
		return restMapping{}, fmt.Errorf("discovering %s: %w", apiVersion, err)
	}
	kinds := map[string]restMapping{}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") { // skip subresources
			kinds[r.Kind] = restMapping{plural: r.Name, namespaced: r.Namespaced}
		}
	}
	if k.discovery == nil {
		k.discovery = map[string]map[string]restMapping{}
	}
	k.discovery[apiVersion] = kinds
	m, ok := kinds[kind]
	if !ok {
		return restMapping{}, fmt.Errorf("the API server serves no kind %s in %s", kind, apiVersion)
	}
	return m, nil
}
