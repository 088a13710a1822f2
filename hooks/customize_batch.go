package hooks

import (
	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
)

// cronJobRuns relates the Jobs a type CronJob's CronJob creates: they are
// the CronJob's children, not the StackResource's, so Metacontroller sends
// them only as related objects. The rule selects by the instance labels in
// the parent's namespace, as the pods rule does.
//
// Cost: Metacontroller keeps one informer per related kind, cluster-wide
// (metacontroller/metacontroller@v4.17.2
// pkg/controller/common/customize/manager.go), so the first CronJob parent makes it
// watch and cache every Job of the cluster, and every Job change is matched
// against the parents' rules. A CronJob keeps at most its history limits
// (3 successful, 1 failed by default) plus the running ones, so each sync
// request carries a handful of Jobs; their pods are the ones the pods rule
// already relates. A type Job needs no rule: its Job is a child.
func cronJobRuns(p *observed.Parent) metacontroller.RelatedResourceRule {
	return metacontroller.RelatedResourceRule{
		APIVersion:    "batch/v1",
		Resource:      "jobs",
		Namespace:     p.Metadata.Namespace,
		LabelSelector: &metacontroller.LabelSelector{MatchLabels: children.Selector(p.Metadata.Name)},
	}
}
