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
{{- end -}}
