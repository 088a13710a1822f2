package children

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Kubernetes never updates a StatefulSet's volumeClaimTemplates: an update
// that changes them is refused whole, and with it every other change of the
// same update. The CRD refuses such edits at admission, but an object
// admitted before that rule existed may still ask for one. Then the
// StatefulSet keeps the claim templates it has, so that every other edit
// still rolls out, and status names the change that was not applied.

// Claims is how the StatefulSet's claim templates are decided.
type Claims struct {
	Kept       []any  // the observed templates, kept; nil: the spec's apply
	Mount      bool   // with Kept: whether the spec's data volume exists to mount
	NotApplied string // with Kept: the change not applied, and what to do (status reports it)
}

// observedClaim is the part of an observed claim template compared with the
// spec.
type observedClaim struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		StorageClassName *string `json:"storageClassName"`
		Resources        struct {
			Requests map[string]resource.Quantity `json:"requests"`
		} `json:"resources"`
	} `json:"spec"`
}

// ClaimsFor compares the spec's storage with the claim templates of the
// observed StatefulSet w (nil when there is none yet). An undecodable
// template counts as different: it is kept as it is.
func ClaimsFor(name, namespace string, spec schema.Spec, w *observed.Child) Claims {
	if spec.Type != schema.TypeStatefulService || w == nil || w.Kind != schema.KindStatefulSet {
		return Claims{}
	}
	var data *observedClaim
	same := true
	for _, raw := range w.Spec.VolumeClaimTemplates {
		var c observedClaim
		if json.Unmarshal(raw, &c) != nil || c.Metadata.Name != dataVolume || data != nil {
			same = false
			continue
		}
		data = &c
	}
	st := spec.Storage
	switch {
	case st == nil && data == nil:
	case st == nil || data == nil:
		same = false
	default:
		size, ok := data.Spec.Resources.Requests["storage"]
		same = same && ok && size.Cmp(st.Size) == 0 && deref(data.Spec.StorageClassName) == st.StorageClassName
	}
	if same {
		return Claims{}
	}
	kept := make([]any, 0, len(w.Spec.VolumeClaimTemplates))
	for _, raw := range w.Spec.VolumeClaimTemplates {
		m, err := decodeObject(raw)
		if err != nil {
			continue // not an object: nothing the API server would store
		}
		prune(m)
		kept = append(kept, m)
	}
	return Claims{Kept: kept, Mount: st != nil && data != nil, NotApplied: notApplied(name, namespace, st, data)}
}

// notApplied says which storage change the StatefulSet cannot take and how
// to apply it: expand the claims by hand, then let stackdome recreate the
// StatefulSet (orphaning its pods, which it adopts again).
func notApplied(name, namespace string, st *schema.Storage, data *observedClaim) string {
	recreate := fmt.Sprintf("kubectl delete statefulset %s --cascade=orphan -n %s: stackdome recreates it with the new template and the pods keep running", name, namespace)
	switch {
	case st != nil && data == nil:
		return fmt.Sprintf("spec.storage was not applied: StatefulSet %s has no volume claim template %q, and Kubernetes never adds one; every other change still rolls out, without the volume. To apply it, run %s", name, dataVolume, recreate)
	case st == nil:
		return fmt.Sprintf("removing spec.storage was not applied: StatefulSet %s keeps its volume claim templates, which Kubernetes never removes; every other change still rolls out, without mounting the volume. To apply it, run %s", name, recreate)
	}
	var parts []string
	if size, ok := data.Spec.Resources.Requests["storage"]; !ok || size.Cmp(st.Size) != 0 {
		parts = append(parts, fmt.Sprintf("spec.storage.size %s (the claim template keeps %s)", st.Size.String(), size.String()))
	}
	if c := deref(data.Spec.StorageClassName); c != st.StorageClassName {
		parts = append(parts, fmt.Sprintf("spec.storage.storageClassName %q (the claim template keeps %q)", st.StorageClassName, c))
	}
	if len(parts) == 0 {
		parts = append(parts, "spec.storage (the StatefulSet has other claim templates)")
	}
	return fmt.Sprintf("%s was not applied: StatefulSet %s keeps its volume claim template %q, which Kubernetes never updates; every other change still rolls out. To apply it, expand each claim %s-%s-<ordinal> (kubectl patch pvc; the StorageClass must allow volume expansion), then run %s",
		strings.Join(parts, " and "), name, dataVolume, dataVolume, name, recreate)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
