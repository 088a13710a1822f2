{{/*
The error pages' brands (errorPages.brands): one ConfigMap holding
brands.json, mounted into the page server, and a digest annotation on its pod
template so that a brand change rolls the pods. Every block is its own
define, so the pieces can move together onto whichever Deployment serves the
pages. With no brand none of them renders anything: the pages carry
stackdome's own brand.
*/}}

{{/* "true" when brands are drawn: some are defined and the pages are on. */}}
{{- define "stackdome.brandsOn" -}}
{{- if and .Values.errorPages.enabled .Values.errorPages.brands }}true{{ end -}}
{{- end -}}

{{- define "stackdome.brandsName" -}}{{ include "stackdome.fullname" . }}-brands{{- end -}}

{{- define "stackdome.brandsDir" -}}/etc/stackdome/brands{{- end -}}

{{/* brands.json as stackdome serve --brands-file reads it (errorpages.Brands). */}}
{{- define "stackdome.brandsJSON" -}}
{{- $out := dict "brands" .Values.errorPages.brands -}}
{{- with .Values.errorPages.defaultBrand }}{{ $_ := set $out "default" . }}{{ end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The pod template annotation: the brand file's digest. */}}
{{- define "stackdome.brandsAnnotations" -}}
{{- if include "stackdome.brandsOn" . -}}
stackdome.io/brands-digest: {{ include "stackdome.brandsJSON" . | sha256sum | quote }}
{{- end -}}
{{- end -}}

{{/* The container's argument naming the file. */}}
{{- define "stackdome.brandsArgs" -}}
{{- if include "stackdome.brandsOn" . -}}
- "--brands-file={{ include "stackdome.brandsDir" . }}/brands.json"
{{- end -}}
{{- end -}}

{{- define "stackdome.brandsVolumeMounts" -}}
{{- if include "stackdome.brandsOn" . -}}
- name: brands
  mountPath: {{ include "stackdome.brandsDir" . }}
  readOnly: true
{{- end -}}
{{- end -}}

{{- define "stackdome.brandsVolumes" -}}
{{- if include "stackdome.brandsOn" . -}}
- name: brands
  configMap:
    name: {{ include "stackdome.brandsName" . }}
{{- end -}}
{{- end -}}
