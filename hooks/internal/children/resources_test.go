package children

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stackdome/stackdome/schema"
)

// qosClass is the QoS class the kubelet gives a pod of spec, by the rule of
// Kubernetes' GetPodQOS (pkg/apis/core/v1/helper/qos) over cpu and memory,
// every container and init container: BestEffort when none has a request
// or limit; Guaranteed when every one has cpu and memory limits and every
// request equals its limit (an unset request is defaulted to the limit at
// admission); else Burstable.
func qosClass(spec corev1.PodSpec) corev1.PodQOSClass {
	bestEffort, guaranteed := true, true
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			lim, hasLim := c.Resources.Limits[name]
			if (hasReq && !req.IsZero()) || (hasLim && !lim.IsZero()) {
				bestEffort = false
			}
			if !hasLim || lim.IsZero() || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case bestEffort:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// TestQOSClassRule: the rule above, on pod specs of Kubernetes' own QoS
// test cases, so the table below is read with Kubernetes' semantics.
func TestQOSClassRule(t *testing.T) {
	rl := func(pairs ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(pairs); i += 2 {
			l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
		return l
	}
	c := func(req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	tests := map[string]struct {
		pod  corev1.PodSpec
		want corev1.PodQOSClass
	}{
		"nothing":                        {corev1.PodSpec{Containers: []corev1.Container{c(nil, nil)}}, corev1.PodQOSBestEffort},
		"only ephemeral storage":         {corev1.PodSpec{Containers: []corev1.Container{c(rl("ephemeral-storage", "1Gi"), nil)}}, corev1.PodQOSBestEffort},
		"limits only":                    {corev1.PodSpec{Containers: []corev1.Container{c(nil, rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSGuaranteed},
		"equal":                          {corev1.PodSpec{Containers: []corev1.Container{c(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSGuaranteed},
		"cpu limit only":                 {corev1.PodSpec{Containers: []corev1.Container{c(nil, rl("cpu", "1"))}}, corev1.PodQOSBurstable},
		"request below limit":            {corev1.PodSpec{Containers: []corev1.Container{c(rl("cpu", "500m", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSBurstable},
		"one of two containers":          {corev1.PodSpec{Containers: []corev1.Container{c(nil, rl("cpu", "1", "memory", "1Gi")), c(nil, nil)}}, corev1.PodQOSBurstable},
		"an init container without any":  {corev1.PodSpec{InitContainers: []corev1.Container{c(nil, nil)}, Containers: []corev1.Container{c(nil, rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSBurstable},
		"requests only, the default one": {corev1.PodSpec{Containers: []corev1.Container{c(rl("memory", "64Mi"), nil)}}, corev1.PodQOSBurstable},
	}
	for name, tc := range tests {
		if got := qosClass(tc.pod); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}

// TestDefaultResources: an app whose spec sets no resources gets the
// platform's, in the pod template (so a change rolls it), the migration too;
// an app's own resources win whole, never merged. The QoS class of the pod
// produced is what the platform's defaults promise.
func TestDefaultResources(t *testing.T) {
	q := resource.MustParse
	requests := corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")}
	limits := corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")}
	memLimit := corev1.ResourceList{corev1.ResourceMemory: q("256Mi")}
	own := &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}
	tests := map[string]struct {
		defaults  corev1.ResourceRequirements
		resources *corev1.ResourceRequirements
		migration bool
		want      corev1.ResourceRequirements
		qos       corev1.PodQOSClass
	}{
		"no defaults, none set":             {qos: corev1.PodQOSBestEffort},
		"requests by default":               {defaults: corev1.ResourceRequirements{Requests: requests}, want: corev1.ResourceRequirements{Requests: requests}, qos: corev1.PodQOSBurstable},
		"requests and a memory limit":       {defaults: corev1.ResourceRequirements{Requests: requests, Limits: memLimit}, want: corev1.ResourceRequirements{Requests: requests, Limits: memLimit}, qos: corev1.PodQOSBurstable},
		"requests equal to limits":          {defaults: corev1.ResourceRequirements{Requests: requests, Limits: limits}, want: corev1.ResourceRequirements{Requests: requests, Limits: limits}, qos: corev1.PodQOSGuaranteed},
		"the migration gets them too":       {defaults: corev1.ResourceRequirements{Requests: requests, Limits: limits}, migration: true, want: corev1.ResourceRequirements{Requests: requests, Limits: limits}, qos: corev1.PodQOSGuaranteed},
		"the app's own win whole":           {defaults: corev1.ResourceRequirements{Requests: requests, Limits: limits}, resources: own, want: *own, qos: corev1.PodQOSBurstable},
		"the app's own, no defaults":        {resources: own, want: *own, qos: corev1.PodQOSBurstable},
		"resources: {} is none":             {defaults: corev1.ResourceRequirements{Requests: requests}, resources: &corev1.ResourceRequirements{}, want: corev1.ResourceRequirements{Requests: requests}, qos: corev1.PodQOSBurstable},
		"own limits only, not the requests": {defaults: corev1.ResourceRequirements{Requests: requests}, resources: &corev1.ResourceRequirements{Limits: limits}, want: corev1.ResourceRequirements{Limits: limits}, qos: corev1.PodQOSGuaranteed},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig()
			cfg.DefaultResources = tc.defaults
			spec := schema.Spec{Type: schema.TypeService, Image: "i", Resources: tc.resources}
			if tc.migration {
				spec.Migration = &schema.Migration{Command: []string{"/migrate"}}
			}
			pod := podTemplate(cfg, "app", spec, false).Spec
			if diff := cmp.Diff(tc.want, pod.Containers[0].Resources); diff != "" {
				t.Errorf("app container resources (-want +got):\n%s", diff)
			}
			if tc.migration {
				if len(pod.InitContainers) != 1 || !cmp.Equal(tc.want, pod.InitContainers[0].Resources) {
					t.Errorf("the migration's resources are not the app's: %v", pod.InitContainers)
				}
			}
			if got := qosClass(pod); got != tc.qos {
				t.Errorf("QoS class %s, want %s", got, tc.qos)
			}
		})
	}
	// The defaults are in the pod template: another default, another
	// revision, so the apps that use them roll.
	a := podTemplate(Config{DefaultResources: corev1.ResourceRequirements{Requests: requests}}, "app", schema.Spec{Type: schema.TypeService, Image: "i"}, false)
	b := podTemplate(Config{DefaultResources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("200m")}}}, "app", schema.Spec{Type: schema.TypeService, Image: "i"}, false)
	if cmp.Equal(a, b) {
		t.Error("two defaults give the same pod template")
	}
	// The defaults are never written through: the Config's lists are not
	// the pod's.
	cfg := Config{DefaultResources: corev1.ResourceRequirements{Requests: requests}}
	p := podTemplate(cfg, "app", schema.Spec{Type: schema.TypeService, Image: "i"}, false)
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = q("9")
	if got := cfg.DefaultResources.Requests[corev1.ResourceCPU]; got.Cmp(q("100m")) != 0 {
		t.Errorf("the defaults changed to %s through a pod", got.String())
	}
}
