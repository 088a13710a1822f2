//go:build e2e

package framework

// Reading pods and their containers as the API server serves them.

import "fmt"

// PodRestarts is the sum of the pod's containers' restartCount.
func PodRestarts(p Obj) int {
	n := 0
	for _, c := range ToSlice(Dig(p, "status", "containerStatuses")) {
		var r int
		fmt.Sscan(fmt.Sprint(Dig(c, "restartCount")), &r)
		n += r
	}
	return n
}

func PodCondition(pod Obj, typ string) map[string]any {
	conds, _ := Dig(pod, "status", "conditions").([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return map[string]any{}
}

func ToSlice(v any) []any { s, _ := v.([]any); return s }
