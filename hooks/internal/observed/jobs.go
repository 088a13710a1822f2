package observed

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/metacontroller"
)

// groupJob is the group key of Jobs: the Job of a type Job is a child, the
// Jobs a CronJob creates are related (the customize hook asks for them by the
// instance label).
var groupJob = metacontroller.GroupKey("Job", "batch/v1")

// jobStatus is what a Job's status says beyond its conditions. A
// Deployment's or Pod's status has none of these fields, a CronJob's
// "active" is a list and is not read.
type jobStatus struct {
	StartTime      *metav1.Time    `json:"startTime"`
	CompletionTime *metav1.Time    `json:"completionTime"`
	Active         json.RawMessage `json:"active"`
	Succeeded      int32           `json:"succeeded"`
	Failed         int32           `json:"failed"`
}

// Run is one observed Job: the parent's own child (type Job) or one its
// CronJob created (related).
type Run struct {
	Name           string
	Created        metav1.Time
	StartTime      *metav1.Time
	CompletionTime *metav1.Time
	// Complete and Failed are the Job's terminal conditions; FinishedAt is
	// the completion time, or when Failed became True.
	Complete, Failed bool
	FinishedAt       *metav1.Time
	// FailedReason and FailedMessage are the Failed condition's
	// (BackoffLimitExceeded, DeadlineExceeded ...).
	FailedReason, FailedMessage string
}

// Finished says the run ended, either way.
func (r Run) Finished() bool { return r.Complete || r.Failed }

// Started is when the run started: its startTime, else its creation.
func (r Run) Started() metav1.Time {
	if r.StartTime != nil {
		return *r.StartTime
	}
	return r.Created
}

type jobCondition struct {
	Type, Status, Reason, Message string
	LastTransitionTime            metav1.Time
}

func runOf(md Meta, st jobStatus, conds []jobCondition) Run {
	r := Run{Name: md.Name, Created: md.CreationTimestamp, StartTime: st.StartTime, CompletionTime: st.CompletionTime}
	for _, c := range conds {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "Complete":
			r.Complete = true
			r.FinishedAt = st.CompletionTime
			if r.FinishedAt == nil {
				r.FinishedAt = &c.LastTransitionTime
			}
		case "Failed":
			r.Failed, r.FailedReason, r.FailedMessage = true, c.Reason, c.Message
			t := c.LastTransitionTime
			r.FinishedAt = &t
		}
	}
	return r
}

// jobChildren are the observed Job children, by name; one that does not
// decode is an error.
func (r *Request) jobChildren() ([]Run, error) {
	var out []Run
	g := r.children[groupJob]
	for _, key := range slices.Sorted(maps.Keys(g)) {
		o := g[key]
		if o.err != nil {
			return nil, fmt.Errorf("decoding observed %s %q: %w", groupJob, key, o.err)
		}
		c := o.v
		if c.Metadata.DeletionTimestamp != nil {
			continue
		}
		if c.Metadata.Name == "" {
			c.Metadata.Name = metacontroller.ParseKey(key).Name
		}
		conds := make([]jobCondition, len(c.Status.Conditions))
		for i, k := range c.Status.Conditions {
			conds[i] = jobCondition{k.Type, k.Status, k.Reason, k.Message, k.LastTransitionTime}
		}
		out = append(out, runOf(c.Metadata, c.Status.jobStatus, conds))
	}
	return sortRuns(out), nil
}

// relatedJobs are the related Jobs of the parent's namespace (a CronJob's
// runs), by start; one that does not decode is an error.
func (r *Request) relatedJobs(namespace string) ([]Run, error) {
	var out []Run
	g := r.related[groupJob]
	for _, key := range slices.Sorted(maps.Keys(g)) {
		o := g[key]
		if o.err != nil {
			return nil, fmt.Errorf("decoding related %s %q: %w", groupJob, key, o.err)
		}
		k := metacontroller.ParseKey(key)
		if o.v.Metadata.DeletionTimestamp != nil || (k.Namespace != "" && k.Namespace != namespace) {
			continue
		}
		md := o.v.Metadata
		if md.Name == "" {
			md.Name = k.Name
		}
		conds := make([]jobCondition, len(o.v.Status.Conditions))
		for i, c := range o.v.Status.Conditions {
			conds[i] = jobCondition{string(c.Type), string(c.Status), c.Reason, c.Message, c.LastTransitionTime}
		}
		st := o.v.Status.jobStatus
		st.StartTime = o.v.Status.StartTime // a Pod's field too: decoded there
		out = append(out, runOf(md, st, conds))
	}
	return sortRuns(out), nil
}

// sortRuns orders runs oldest first: by start, then name.
func sortRuns(runs []Run) []Run {
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i].Started(), runs[j].Started()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return runs[i].Name < runs[j].Name
	})
	return runs
}
