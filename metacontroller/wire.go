// Package metacontroller holds the wire types of Metacontroller's
// CompositeController hooks (sync and customize), with Metacontroller's exact
// JSON names. Objects stay raw JSON until the hook decodes the few fields it
// reads, so a request full of Pods with managedFields costs one scan, not a
// full decode. It imports nothing of stackdome's.
package metacontroller

import (
	"encoding/json"
	"strings"
)

// SyncRequest is the body Metacontroller POSTs to a sync (or finalize) hook.
// Children and Related map a group key ("Kind.apiVersion", see GroupKey) to
// objects keyed by name (hook version v1) or namespace/name (v2).
type SyncRequest struct {
	Controller json.RawMessage `json:"controller,omitempty"`
	Parent     json.RawMessage `json:"parent"`
	Children   Objects         `json:"children"`
	Related    Objects         `json:"related"`
	Finalizing bool            `json:"finalizing"`
}

// SyncResponse is what a sync hook answers. Status replaces the parent's
// status whole, and every observed child missing from Children is deleted, so
// a SyncResponse is only ever sent complete.
type SyncResponse struct {
	Status             any     `json:"status"`
	Children           []any   `json:"children"`
	ResyncAfterSeconds float64 `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool    `json:"finalized,omitempty"`
}

// CustomizeRequest is the body Metacontroller POSTs to a customize hook. Its
// answer is cached per parent UID and generation.
type CustomizeRequest struct {
	Controller json.RawMessage `json:"controller,omitempty"`
	Parent     json.RawMessage `json:"parent"`
}

// CustomizeResponse lists the related objects Metacontroller sends with each
// sync.
type CustomizeResponse struct {
	RelatedResources []RelatedResourceRule `json:"relatedResources"`
}

// RelatedResourceRule selects related objects. A rule with neither selector,
// namespace nor names selects every object of the resource, so a hook must
// never answer one.
type RelatedResourceRule struct {
	APIVersion        string         `json:"apiVersion"`
	Resource          string         `json:"resource"`
	LabelSelector     *LabelSelector `json:"labelSelector,omitempty"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	Namespace         string         `json:"namespace,omitempty"`
	Names             []string       `json:"names,omitempty"`
}

// LabelSelector is metav1.LabelSelector's wire shape, limited to matchLabels,
// the only form stackdome answers.
type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// Objects is the children or related map of a sync request: group key →
// object key → raw object.
type Objects map[string]map[string]json.RawMessage

// GroupKey returns Metacontroller's group key for a kind: "Service.v1" for
// the core group, "Deployment.apps/v1" otherwise.
func GroupKey(kind, apiVersion string) string {
	return kind + "." + apiVersion
}

// Key is a namespace/name pair decoded from a children or related map key.
// Namespace is empty for hook version v1 keys, which carry the name only.
type Key struct {
	Namespace, Name string
}

// ParseKey decodes an object key of either hook version: "name" (v1) or
// "namespace/name" (v2).
func ParseKey(k string) Key {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return Key{Namespace: k[:i], Name: k[i+1:]}
	}
	return Key{Name: k}
}

// Named returns the object of the group whose key names name, in either hook
// version's key form. For a v2 key the namespace must be namespace.
func (o Objects) Named(group, namespace, name string) (json.RawMessage, bool) {
	g := o[group]
	if raw, ok := g[name]; ok {
		return raw, true
	}
	raw, ok := g[namespace+"/"+name]
	return raw, ok
}
