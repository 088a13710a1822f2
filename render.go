package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// renderCmd prints, as YAML documents in the style of `helm template`, the
// children the hook answers on the first sync of each StackResource read
// from c.renderFile: what Metacontroller creates once `kubectl apply`
// created it. Each goes the hook's own way: the StackResource as the API
// server stores it (asCreated), the request Metacontroller sends for a new
// parent with nothing observed (internal/mcrequest, the related objects
// chosen by the hook's own Customize among the input's other objects), then
// the hook's Sync with c's settings. A StackResource the API server or the
// hook would refuse gets each of its errors on stderr, kubectl's way, and no
// document; render then fails after printing the others. A related object
// the rules name that the input lacks is noted on stderr: it is rendered as
// missing from the cluster.
func renderCmd(c config, stdin io.Reader, stdout, stderr io.Writer) error {
	in := stdin
	if c.renderFile != "-" {
		f, err := os.Open(c.renderFile)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	objs, err := readObjects(in, c.renderNamespace)
	if err != nil {
		return err
	}
	if len(objs.parents) == 0 {
		return errors.New("no StackResource in the input")
	}
	now := c.syncNow
	if now.IsZero() {
		now = time.Now()
	}
	var out bytes.Buffer
	invalid := 0
	for i, p := range objs.parents {
		r, err := renderOne(c.hooks, p, objs.cluster, i+1, now)
		if err != nil {
			if !printInvalid(stderr, mcrequest.Name(p), err) {
				return fmt.Errorf("rendering StackResource %s/%s: %w", mcrequest.Namespace(p), mcrequest.Name(p), err)
			}
			invalid++
			continue
		}
		if len(r.missing) > 0 {
			fmt.Fprintf(stderr, "note: StackResource %q: not in the input, so rendered as absent from the cluster: %s\n", mcrequest.Name(p), strings.Join(r.missing, ", "))
		}
		if err := writeDocuments(&out, r.children, mcrequest.Namespace(p)); err != nil {
			return err
		}
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if invalid > 0 {
		return fmt.Errorf("%d of %d StackResources invalid", invalid, len(objs.parents))
	}
	return nil
}

// rendered is one StackResource's first sync: the children the hook
// answers, in its order, and the related objects its rules name that
// were not given ("Secret shop/cart-db").
type rendered struct {
	children []mcrequest.Object
	missing  []string
}

// renderOne answers the first sync of parent p, StackResource number n, in a
// cluster holding cluster, with the hook's settings cfg. A StackResource the
// API server or the hook refuses is a *refusedError.
func renderOne(cfg hooks.Config, p mcrequest.Object, cluster []mcrequest.Object, n int, now time.Time) (rendered, error) {
	stored, err := asCreated(p, n, now)
	if err != nil {
		return rendered{}, &refusedError{err}
	}
	if err := hooks.Invalid(mcrequest.Raw(stored)); err != nil {
		return rendered{}, &refusedError{err}
	}
	cust, err := cfg.Customize(&metacontroller.CustomizeRequest{Parent: mcrequest.Raw(stored)})
	if err != nil {
		return rendered{}, fmt.Errorf("customize: %w", err)
	}
	s := mcrequest.Sync{Parent: stored, Cluster: cluster, Rules: cust.RelatedResources}
	resp, _, err := cfg.Sync(s.Request(), nil, now)
	if err != nil {
		return rendered{}, fmt.Errorf("sync: %w", err)
	}
	var r rendered
	for _, c := range resp.Children {
		r.children = append(r.children, mcrequest.ToObject(c))
	}
	for _, rule := range cust.RelatedResources {
		kind := mcrequest.RelatedKind(rule.Resource)
		for _, name := range rule.Names {
			found := slices.ContainsFunc(cluster, func(o mcrequest.Object) bool {
				return mcrequest.Str(o, "kind") == kind && mcrequest.Str(o, "apiVersion") == rule.APIVersion &&
					mcrequest.Name(o) == name && mcrequest.Selects(rule, o)
			})
			if !found {
				r.missing = append(r.missing, fmt.Sprintf("%s %s/%s", kind, rule.Namespace, name))
			}
		}
	}
	return r, nil
}

// refusedError is why the API server (asCreated) or the hook (hooks.Invalid)
// refuses a StackResource.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// printInvalid writes why StackResource name is refused, one line a
// problem at its field path, as kubectl does, and reports whether err was
// such a refusal.
func printInvalid(w io.Writer, name string, err error) bool {
	var refused *refusedError
	if !errors.As(err, &refused) {
		return false
	}
	var inv *schema.InvalidError
	if !errors.As(err, &inv) {
		fmt.Fprintf(w, "error: StackResource %q is invalid: %s\n", name, refused.err)
		return true
	}
	for _, e := range inv.Errors {
		fmt.Fprintf(w, "error: StackResource %q is invalid: %s\n", name, e.Error())
	}
	return true
}

// writeDocuments writes each child as a YAML document in namespace ns,
// where Metacontroller creates it, under a comment naming it.
func writeDocuments(w *bytes.Buffer, children []mcrequest.Object, ns string) error {
	for _, c := range children {
		c = mcrequest.Clone(c)
		md := mcrequest.Meta(c)
		if _, ok := md["namespace"]; !ok {
			md["namespace"] = ns // the hook leaves it to Metacontroller
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", mcrequest.Str(c, "kind"), mcrequest.Name(c), err)
		}
		fmt.Fprintf(w, "---\n# Source: %s/%s/%s\n%s", mcrequest.Str(c, "kind"), mcrequest.Namespace(c), mcrequest.Name(c), b)
	}
	return nil
}
