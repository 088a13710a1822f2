package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/schema"
)

// What stackdome render reads: the objects of one or many YAML documents or
// JSON objects, Lists expanded, split into the StackResources to render and
// the objects around them, and each StackResource made what the API server
// stores when `kubectl apply` creates it.

// maxRenderInput bounds what render reads: far more than any set of
// manifests, far less than a machine's memory.
const maxRenderInput = 32 << 20

// renderInput is what render was given: the StackResources in input order,
// and every other object, which stands for what exists in the cluster (the
// customize hook's rules select from them: the ConfigMaps and Secrets a
// spec uses, the team's Middlewares, the chart's error-page Service).
type renderInput struct {
	parents []mcrequest.Object
	cluster []mcrequest.Object
}

// readObjects decodes r, YAML documents separated by --- or JSON objects,
// into objects; a List's items stand for the List, empty documents are
// skipped. An object without a namespace gets ns, as kubectl gives one.
func readObjects(r io.Reader, ns string) (renderInput, error) {
	var in renderInput
	lr := &io.LimitedReader{R: r, N: maxRenderInput + 1}
	dec := utilyaml.NewYAMLOrJSONDecoder(lr, 4096)
	for doc := 1; ; doc++ {
		var o mcrequest.Object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if lr.N <= 0 {
			return in, fmt.Errorf("reading objects: more than %d bytes", maxRenderInput)
		}
		if err != nil {
			return in, fmt.Errorf("decoding document %d: %w", doc, err)
		}
		if len(o) == 0 {
			continue
		}
		objs := []mcrequest.Object{o}
		if items, ok := o["items"].([]any); ok && strings.HasSuffix(mcrequest.Str(o, "kind"), "List") {
			objs = objs[:0]
			for i, it := range items {
				m, ok := it.(map[string]any)
				if !ok {
					return in, fmt.Errorf("decoding document %d: items[%d] is not an object", doc, i)
				}
				objs = append(objs, m)
			}
		}
		for _, o := range objs {
			if mcrequest.Str(o, "kind") == "" || mcrequest.Name(o) == "" {
				return in, fmt.Errorf("document %d: an object needs a kind and a metadata.name", doc)
			}
			if mcrequest.Namespace(o) == "" {
				mcrequest.Meta(o)["namespace"] = ns
			}
			if mcrequest.Str(o, "kind") != schema.Kind {
				in.cluster = append(in.cluster, o)
				continue
			}
			if v := mcrequest.Str(o, "apiVersion"); v != schema.APIVersion {
				return in, fmt.Errorf("document %d: StackResource %q: apiVersion %q, want %s", doc, mcrequest.Name(o), v, schema.APIVersion)
			}
			in.parents = append(in.parents, o)
		}
	}
	return in, nil
}

// unknownFieldsError is a spec holding fields the CRD does not know, which
// `kubectl apply` (strict field validation, its default) refuses.
type unknownFieldsError struct{ paths []string }

func (e *unknownFieldsError) Error() string {
	fields := make([]string, len(e.paths))
	for i, p := range e.paths {
		fields[i] = fmt.Sprintf("unknown field %q", p)
	}
	return "strict decoding error: " + strings.Join(fields, ", ")
}

// asCreated is o as the API server stores a new StackResource: its status
// dropped (the status subresource ignores one sent on create), its
// metadata the name, namespace, labels and annotations given and what the
// server sets (uid number n of mcrequest.UID, generation 1, now as its
// creation time), its spec pruned and defaulted by the CRD
// (schema.AsStored). A spec with fields the CRD does not know is an
// *unknownFieldsError.
func asCreated(o mcrequest.Object, n int, now time.Time) (mcrequest.Object, error) {
	given := mcrequest.Meta(o)
	md := map[string]any{
		"name": mcrequest.Name(o), "namespace": mcrequest.Namespace(o),
		"uid": mcrequest.UID(n), "generation": 1, "resourceVersion": fmt.Sprint(n),
		"creationTimestamp": now.UTC().Format(time.RFC3339),
	}
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := given[k]; ok {
			md[k] = v
		}
	}
	stored := mcrequest.Object{"apiVersion": schema.APIVersion, "kind": schema.Kind, "metadata": md}
	spec, ok := o["spec"].(map[string]any)
	if !ok {
		// Left for the hook to refuse, as it refuses a stored parent
		// without a spec or with one of the wrong shape.
		if s, present := o["spec"]; present {
			stored["spec"] = s
		}
		return stored, nil
	}
	spec = mcrequest.Clone(spec)
	pruned, err := schema.AsStored(spec)
	if err != nil {
		return nil, err
	}
	if len(pruned) > 0 {
		return nil, &unknownFieldsError{paths: pruned}
	}
	stored["spec"] = spec
	return stored, nil
}
