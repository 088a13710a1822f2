{{/* Hooks over TLS (docs/operations.md, "Hooks over TLS") */}}

{{/*
The Secret stackdome mounts: the serving pair (tls.crt, tls.key) and ca.crt,
the CA that signed it and Metacontroller's client certificate. stackdome
reads ca.crt as its client CA; the CompositeController's caBundle points
at the same key.
*/}}
{{- define "stackdome.hooksTLS.secretName" -}}
{{- .Values.hooks.tls.existingSecret | default (printf "%s-hooks-tls" (include "stackdome.fullname" . | trunc 53 | trimSuffix "-")) -}}
{{- end -}}

{{/* The Secret of Metacontroller's client pair: the CompositeController's clientTLS. */}}
{{- define "stackdome.hooksTLS.clientSecretName" -}}
{{- .Values.hooks.tls.existingClientSecret | default (printf "%s-metacontroller-client" (include "stackdome.fullname" . | trunc 41 | trimSuffix "-")) -}}
{{- end -}}

{{/* The release's hooks CA (generated or cert-manager's), which no pod mounts. */}}
{{- define "stackdome.hooksTLS.caSecretName" -}}
{{- printf "%s-hooks-ca" (include "stackdome.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}

{{/*
The names the serving certificate holds: the one Metacontroller dials
(<service>.<namespace>, pkg/hooks/webhook.go webhookURL) and the cluster
DNS forms of it.
*/}}
{{- define "stackdome.hooksTLS.dnsNames" -}}
{{- $svc := include "stackdome.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson -}}
{{- end -}}

{{/*
The generated certificates (hooks.tls.enabled, neither cert-manager nor
existing Secrets), as YAML: ca, server and client, each crt and key in
base64. Kept across upgrades: what the live Secrets hold is reused (lookup);
only what is missing is made, a leaf signed by the kept CA, so deleting a
leaf's Secret and running helm upgrade rotates that leaf alone. Without a
cluster (helm template, Argo CD, --dry-run) lookup finds nothing and every
render makes new ones. Computed once per render and kept in .Values, so that
the Secrets and the CompositeController's credentials hash agree.
*/}}
{{- define "stackdome.hooksTLS.generated" -}}
{{- if not (hasKey .Values "__stackdomeHooksTLS") -}}
{{- $ns := .Release.Namespace -}}
{{- $full := include "stackdome.fullname" . -}}
{{- $caS := lookup "v1" "Secret" $ns (include "stackdome.hooksTLS.caSecretName" .) -}}
{{- $srvS := lookup "v1" "Secret" $ns (include "stackdome.hooksTLS.secretName" .) -}}
{{- $cliS := lookup "v1" "Secret" $ns (include "stackdome.hooksTLS.clientSecretName" .) -}}
{{- $m := dict -}}
{{- $ca := dict -}}
{{- if and $caS (index ($caS.data | default dict) "tls.crt") (index ($caS.data | default dict) "tls.key") -}}
{{- $ca = buildCustomCert (index $caS.data "tls.crt") (index $caS.data "tls.key") -}}
{{- $_ := set $m "ca" (dict "crt" (index $caS.data "tls.crt") "key" (index $caS.data "tls.key")) -}}
{{- else -}}
{{- $ca = genCA (printf "%s hooks CA" $full) 3650 -}}
{{- $_ := set $m "ca" (dict "crt" ($ca.Cert | b64enc) "key" ($ca.Key | b64enc)) -}}
{{- $srvS = dict -}}
{{- $cliS = dict -}}
{{- end -}}
{{- $names := include "stackdome.hooksTLS.dnsNames" . | fromJsonArray -}}
{{- range $leaf := list (dict "name" "server" "secret" $srvS "cn" (index $names 1) "names" $names) (dict "name" "client" "secret" $cliS "cn" "metacontroller" "names" list) -}}
{{- $data := $leaf.secret.data | default dict -}}
{{- if and (index $data "tls.crt") (index $data "tls.key") (eq (index $data "ca.crt") (index $m "ca").crt) -}}
{{- $_ := set $m $leaf.name (dict "crt" (index $data "tls.crt") "key" (index $data "tls.key")) -}}
{{- else -}}
{{- $c := genSignedCert $leaf.cn nil $leaf.names 3650 $ca -}}
{{- $_ := set $m $leaf.name (dict "crt" ($c.Cert | b64enc) "key" ($c.Key | b64enc)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set .Values "__stackdomeHooksTLS" $m -}}
{{- end -}}
{{- index .Values "__stackdomeHooksTLS" | toYaml -}}
{{- end -}}

{{/*
A hash of the credentials Metacontroller reads (the CA it trusts and its
client certificate), first 16 hex digits. Metacontroller reads caBundle and
clientTLS only when it (re)creates a CompositeController's controller, and
only a change of the CompositeController's spec does that (an annotation
does not: pkg/controller/composite/metacontroller.go compares Spec). The
hooks' paths carry it as a query stackdome ignores, so a rotation changes
the spec. With cert-manager or existing Secrets it is read from the live
Secrets (empty without a cluster, and on the first install before
cert-manager has issued them).
*/}}
{{- define "stackdome.hooksTLS.credentialsHash" -}}
{{- $ca := "" -}}
{{- $client := "" -}}
{{- if include "stackdome.hooksTLS.generates" . -}}
{{- $m := include "stackdome.hooksTLS.generated" . | fromYaml -}}
{{- $ca = $m.ca.crt -}}
{{- $client = $m.client.crt -}}
{{- else -}}
{{- $ns := .Release.Namespace -}}
{{- with lookup "v1" "Secret" $ns (include "stackdome.hooksTLS.secretName" .) -}}
{{- $ca = index (.data | default dict) "ca.crt" | default "" -}}
{{- end -}}
{{- with lookup "v1" "Secret" $ns (include "stackdome.hooksTLS.clientSecretName" .) -}}
{{- $client = index (.data | default dict) "tls.crt" | default "" -}}
{{- end -}}
{{- end -}}
{{- printf "%s\n%s" $ca $client | sha256sum | trunc 16 -}}
{{- end -}}

{{/* Non-empty when the chart generates the certificates itself. */}}
{{- define "stackdome.hooksTLS.generates" -}}
{{- $t := .Values.hooks.tls -}}
{{- if and $t.enabled (not $t.certManager.enabled) (not $t.existingSecret) -}}true{{- end -}}
{{- end -}}

{{/*
Guards of hooks.tls: one source of certificates, both existing Secrets or
neither, and cert-manager's API served when it is asked for.
*/}}
{{- define "stackdome.hooksTLS.validate" -}}
{{- $t := .Values.hooks.tls -}}
{{- if $t.enabled -}}
{{- if ne (empty $t.existingSecret) (empty $t.existingClientSecret) -}}
{{- fail "hooks.tls.existingSecret and hooks.tls.existingClientSecret go together: the serving pair with its ca.crt, and Metacontroller's client pair signed by that CA" -}}
{{- end -}}
{{- if and $t.existingSecret $t.certManager.enabled -}}
{{- fail "hooks.tls.existingSecret and hooks.tls.certManager.enabled: choose one source of the hooks' certificates" -}}
{{- end -}}
{{- if and $t.certManager.enabled (not (or (.Capabilities.APIVersions.Has "cert-manager.io/v1/Certificate") (.Capabilities.APIVersions.Has "cert-manager.io/v1"))) -}}
{{- fail "hooks.tls.certManager.enabled: this cluster does not serve cert-manager.io/v1 (install cert-manager first; rendering without a cluster: pass --api-versions cert-manager.io/v1)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
