package mcrequest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/stackdome/stackdome/metacontroller"
)

// Sync is what one sync request is made of. Metacontroller sends the parent
// as stored, every observed child (by the chart's child resources) and the
// objects of the cluster the customize hook's rules select.
type Sync struct {
	Parent   Object
	Children []Object // the observed children, as the API server stores them
	// Cluster is every object a related rule may select: the pods, the
	// chart's error-page Service, the team's ConfigMaps, Secrets and
	// Middlewares, a CronJob's Jobs. Only what Rules select is sent.
	Cluster []Object
	// Rules is the customize hook's answer for Parent (Metacontroller
	// caches it per parent UID and generation).
	Rules []metacontroller.RelatedResourceRule
	// SyncVersion is the sync hook's version: "v2" (the chart's since
	// 0.2.0) when empty, or "v1".
	SyncVersion string
}

func (s Sync) version() string {
	if s.SyncVersion == "" {
		return "v2"
	}
	return s.SyncVersion
}

// key is an object's key in a children or related map: namespace/name at
// hook version v2, the name alone at v1.
func (s Sync) key(o Object) string {
	if s.version() == "v1" {
		return Name(o)
	}
	return Namespace(o) + "/" + Name(o)
}

// Request builds the request Metacontroller v4.17.2 sends: every child group
// of the chart present even when empty, each related rule's group present
// even when nothing matches, and at hook version v1 the related objects of
// another namespace than the parent's left out
// (metacontroller/metacontroller@v4.17.2 pkg/controller/common/api/v1
// UniformObjectMap.Convert). Children without a namespace get the parent's.
func (s Sync) Request() *metacontroller.SyncRequest {
	ns := Namespace(s.Parent)
	req := &metacontroller.SyncRequest{
		Controller: Raw(Controller(s.version())),
		Parent:     Raw(s.Parent),
		Children:   metacontroller.Objects{},
		Related:    metacontroller.Objects{},
	}
	for _, r := range ChildResources {
		req.Children[r.Group()] = map[string]json.RawMessage{}
	}
	for _, c := range s.Children {
		if Namespace(c) == "" {
			Meta(c)["namespace"] = ns
		}
		g := metacontroller.GroupKey(Str(c, "kind"), Str(c, "apiVersion"))
		if req.Children[g] == nil {
			panic(fmt.Sprintf("mcrequest: %s is not a child resource of the chart", g))
		}
		req.Children[g][s.key(c)] = Raw(c)
	}
	for _, rule := range s.Rules {
		kind := relatedKinds[rule.Resource]
		g := metacontroller.GroupKey(kind, rule.APIVersion)
		if req.Related[g] == nil {
			req.Related[g] = map[string]json.RawMessage{}
		}
		for _, o := range s.Cluster {
			if Str(o, "kind") != kind || Str(o, "apiVersion") != rule.APIVersion || !Selects(rule, o) {
				continue
			}
			if s.version() == "v1" && Namespace(o) != ns {
				continue
			}
			req.Related[g][s.key(o)] = Raw(o)
		}
	}
	return req
}

// Customize builds the customize request Metacontroller v4.17.2 sends for
// parent: the chart's controller (its customize hook at v2) and the parent
// as stored. Metacontroller caches the answer per parent UID and
// generation, and the rules it returns are a Sync's Rules.
func Customize(parent Object) *metacontroller.CustomizeRequest {
	return &metacontroller.CustomizeRequest{Controller: Raw(Controller("v2")), Parent: Raw(parent)}
}

// Selects reports whether a customize rule selects o: in the rule's
// namespace (every namespace when it names none, as at hook version v2),
// among its names when it lists some, with every label of its selector.
func Selects(rule metacontroller.RelatedResourceRule, o Object) bool {
	if rule.Namespace != "" && rule.Namespace != Namespace(o) {
		return false
	}
	if len(rule.Names) > 0 {
		found := false
		for _, n := range rule.Names {
			found = found || n == Name(o)
		}
		if !found {
			return false
		}
	}
	if rule.LabelSelector != nil {
		labels, _ := Meta(o)["labels"].(map[string]any)
		for k, v := range rule.LabelSelector.MatchLabels {
			if labels[k] != v {
				return false
			}
		}
	}
	return true
}

// Raw encodes o as compact JSON with keys sorted, <, > and & unescaped.
func Raw(o any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		panic(fmt.Sprintf("mcrequest: encoding %T: %v", o, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Encode is a request as the fixtures hold it: indented by one space, keys
// sorted, a final newline.
func Encode(req *metacontroller.SyncRequest) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, Raw(req), "", " "); err != nil {
		panic(fmt.Sprintf("mcrequest: indenting a request: %v", err))
	}
	return append(b.Bytes(), '\n')
}

// RelatedKind is the kind of the objects a customize rule relates by
// resource ("secrets": "Secret"), "" for a resource no rule of the hook
// names.
func RelatedKind(resource string) string { return relatedKinds[resource] }
