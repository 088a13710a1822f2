{{/*
What the platform gives every StackResource that does not say otherwise
(appDefaults): flags of the hook, so the Deployment that answers /sync carries
them.
*/}}

{{/* name=quantity pairs of a resource list, comma separated, sorted. */}}
{{- define "stackdome.resourceList" -}}
{{- $pairs := list -}}
{{- range $name, $q := . }}{{ $pairs = append $pairs (printf "%s=%v" $name $q) }}{{ end -}}
{{- join "," $pairs -}}
{{- end -}}

{{- define "stackdome.appDefaultsArgs" -}}
{{- with .Values.appDefaults.resources.requests -}}
- "--default-requests={{ include "stackdome.resourceList" . }}"
{{ end -}}
{{- with .Values.appDefaults.resources.limits -}}
- "--default-limits={{ include "stackdome.resourceList" . }}"
{{ end -}}
{{- /* A per-app NetworkPolicy admits stackdome's own pods (this release's
  namespace and selector labels) to every declared port, and Traefik's
  namespace (a value: it cannot be read from the cluster) to public ones. */ -}}
- "--network-policy-default={{ .Values.appDefaults.networkPolicy.enabled }}"
- "--network-policy-stackdome-namespace={{ .Release.Namespace }}"
- "--network-policy-stackdome-pods={{ include "stackdome.selectorLabels" . | fromYaml | include "stackdome.labelList" }}"
- "--network-policy-traefik-namespace={{ .Values.appDefaults.networkPolicy.traefikNamespace }}"
- "--pod-monitors={{ .Values.appDefaults.podMonitor.enabled }}"
{{- with .Values.appDefaults.networkPolicy.traefikPodLabels }}
- "--network-policy-traefik-pods={{ include "stackdome.labelList" . }}"
{{- end }}
{{- end -}}

{{/* k=v pairs of a label map, comma separated, sorted. */}}
{{- define "stackdome.labelList" -}}
{{- $pairs := list -}}
{{- range $k, $v := . }}{{ $pairs = append $pairs (printf "%s=%s" $k $v) }}{{ end -}}
{{- join "," $pairs -}}
{{- end -}}
