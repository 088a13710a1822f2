{{/* Names */}}

{{- define "stackdome.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "stackdome.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The error-page Service: stackdome's errors Middlewares point at it. */}}
{{- define "stackdome.errorServiceName" -}}
{{- printf "%s-error-pages" (include "stackdome.fullname" . | trunc 51 | trimSuffix "-") -}}
{{- end -}}

{{/* The CompositeController is cluster-scoped: the namespace makes it unique per release. */}}
{{- define "stackdome.compositeControllerName" -}}
{{- printf "%s-%s" .Release.Namespace (include "stackdome.fullname" .) -}}
{{- end -}}

{{- define "stackdome.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "stackdome.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Middleware name Traefik's entry points refer to (fixed so the reference is predictable). */}}
{{- define "stackdome.entryPointMiddlewareName" -}}stackdome-errors{{- end -}}

{{- define "stackdome.entryPointMiddlewareReference" -}}
{{- printf "%s-%s@kubernetescrd" .Release.Namespace (include "stackdome.entryPointMiddlewareName" .) -}}
{{- end -}}

{{/* Labels */}}

{{- define "stackdome.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "stackdome.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
Selector labels. app.kubernetes.io/component keeps stackdome's own pods apart
from the children it creates, which carry app.kubernetes.io/name and
app.kubernetes.io/instance of their StackResource.
*/}}
{{- define "stackdome.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stackdome.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/*
The error-page Deployment's labels: the same name and instance, component
error-pages, so that neither Deployment's selector takes the other's pods.
*/}}
{{- define "stackdome.pagesLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "stackdome.pagesSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "stackdome.pagesSelectorLabels" -}}
app.kubernetes.io/name: {{ include "stackdome.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: error-pages
{{- end -}}

{{- define "stackdome.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
Seconds in a duration of the form 1h2m3s (the schema allows only that form for
config.drainDelay and config.shutdownTimeout, so templates can compare them
with the grace period).
*/}}
{{- define "stackdome.durationSeconds" -}}
{{- $h := regexFind "[0-9]+h" . | trimSuffix "h" | default "0" | atoi -}}
{{- $m := regexFind "[0-9]+m" . | trimSuffix "m" | default "0" | atoi -}}
{{- $s := regexFind "[0-9]+s" . | trimSuffix "s" | default "0" | atoi -}}
{{- add (mul $h 3600) (mul $m 60) $s -}}
{{- end -}}

{{- define "stackdome.terminationGracePeriodSeconds" -}}
{{- $drain := include "stackdome.durationSeconds" .Values.config.drainDelay | atoi -}}
{{- $shutdown := include "stackdome.durationSeconds" .Values.config.shutdownTimeout | atoi -}}
{{- $stop := add $drain $shutdown -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add $stop 10 -}}
{{- else -}}
{{- $grace := int .Values.terminationGracePeriodSeconds -}}
{{- if le $grace $stop -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed config.drainDelay + config.shutdownTimeout (%s + %s = %ds): the kubelet would kill stackdome before it finished draining" $grace .Values.config.drainDelay .Values.config.shutdownTimeout $stop) -}}
{{- end -}}
{{- $grace -}}
{{- end -}}
{{- end -}}

{{/*
Guards: values that would render references Traefik or Metacontroller cannot
resolve fail here, before anything is applied. Included by every template that
depends on them.
*/}}
{{- define "stackdome.validate" -}}
{{- if not .Values.podCIDRs -}}
{{- fail "podCIDRs is required: the cluster's pod network CIDR(s), the only addresses stackdome dials (--dial-allow). Find them with: kubectl get nodes -o jsonpath='{.items[*].spec.podCIDRs}' (kind, kubeadm, flannel: 10.244.0.0/16; k3s, RKE2: 10.42.0.0/16; Calico: its IPPool, kubectl get ippools -o jsonpath='{.items[*].spec.cidr}', default 192.168.0.0/16; EKS with the VPC CNI: the VPC's or pod subnets' CIDRs, aws ec2 describe-subnets; GKE: the cluster's Pod IPv4 range, gcloud container clusters describe CLUSTER --format='value(clusterIpv4Cidr)'). Then pass --set 'podCIDRs={10.244.0.0/16}' (docs/install.md, Prerequisites, item 4)" -}}
{{- end -}}
{{- $p := .Values.ports -}}
{{- if or (eq (int $p.hooks) (int $p.errorPages)) (eq (int $p.hooks) (int $p.metrics)) (eq (int $p.errorPages) (int $p.metrics)) -}}
{{- fail (printf "ports.hooks (%d), ports.errorPages (%d) and ports.metrics (%d) must all differ: each of stackdome's servers binds a port of its own, and the NetworkPolicy opens each to a different audience" (int $p.hooks) (int $p.errorPages) (int $p.metrics)) -}}
{{- end -}}
{{- $epm := .Values.errorPages.entryPointMiddleware -}}
{{- if $epm.enabled -}}
{{- if not .Values.errorPages.enabled -}}
{{- fail "errorPages.entryPointMiddleware.enabled needs errorPages.enabled=true: the Middleware points at the error-page Service" -}}
{{- end -}}
{{- $want := include "stackdome.entryPointMiddlewareReference" . -}}
{{- if ne $epm.reference $want -}}
{{- fail (printf "errorPages.entryPointMiddleware.reference is %q but this release renders the Middleware %q in namespace %q: Traefik resolves only %q. Set the reference (and Traefik's ports.<entrypoint>.http.middlewares) to exactly that" $epm.reference (include "stackdome.entryPointMiddlewareName" .) .Release.Namespace $want) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Prerequisites */}}

{{/*
The oldest Metacontroller the chart runs on: v4.16.0, the first whose
webhooks take caBundle, clientTLS and service.protocol https (its
CHANGELOG), which the hooks' mutual TLS needs; it also builds v2 sync
requests (from v4.15.0, commit b6b93d6 "Handle hook versioning"). The one
place the chart names it: the messages below and NOTES include it, and a
test holds docs/install.md to it.
*/}}
{{- define "stackdome.minMetacontroller" -}}4.16.0{{- end -}}

{{/*
Fails, naming what to install first, when the cluster lacks what stackdome
runs on (crdCheck=false skips it):
- the APIs, from .Capabilities: discovery on install and upgrade, the
  --api-versions given to helm template. Either group/version/Kind or the
  bare group/version counts (Traefik's CRDs come as one bundle).
- on a live cluster (lookup answers nothing under helm template and
  --dry-run, so this part is skipped there): a CompositeController CRD whose
  sync hook takes version v2 and a webhook clientTLS (minMetacontroller's
  CRD: an older CRD lacks them, the API server prunes them, and
  Metacontroller would call the hooks at v1 and without a client
  certificate, which stackdome refuses).
*/}}
{{- define "stackdome.prerequisites" -}}
{{- /* Unless explicitly false: a release upgraded with --reuse-values from before crdCheck existed has none. */ -}}
{{- if ne (toString .Values.crdCheck) "false" -}}
{{- $min := include "stackdome.minMetacontroller" . -}}
{{- $caps := .Capabilities.APIVersions -}}
{{- $missing := list -}}
{{- if not (or ($caps.Has "metacontroller.k8s.io/v1alpha1/CompositeController") ($caps.Has "metacontroller.k8s.io/v1alpha1")) -}}
{{- $missing = append $missing (printf "Metacontroller %s or later (API metacontroller.k8s.io/v1alpha1 CompositeController)" $min) -}}
{{- end -}}
{{- $traefik := list -}}
{{- range list "IngressRoute" "Middleware" -}}
{{- if not (or ($caps.Has (printf "traefik.io/v1alpha1/%s" .)) ($caps.Has "traefik.io/v1alpha1")) -}}
{{- $traefik = append $traefik . -}}
{{- end -}}
{{- end -}}
{{- if $traefik -}}
{{- $missing = append $missing (printf "Traefik v3's CRDs (API traefik.io/v1alpha1 %s)" (join ", " $traefik)) -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "this cluster does not serve what stackdome runs on; install first: %s (docs/install.md, Prerequisites). Rendering without a cluster: pass the cluster's APIs with --api-versions (Argo CD does), or set crdCheck=false" (join "; " $missing)) -}}
{{- end -}}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "compositecontrollers.metacontroller.k8s.io" -}}
{{- if $crd -}}
{{- $ok := false -}}
{{- range $crd.spec.versions -}}
{{- if eq .name "v1alpha1" -}}
{{- $sync := dig "schema" "openAPIV3Schema" "properties" "spec" "properties" "hooks" "properties" "sync" "properties" dict . -}}
{{- $version := dig "version" dict $sync -}}
{{- $clientTLS := dig "webhook" "properties" "clientTLS" dict $sync -}}
{{- if and $version (or (not (hasKey $version "enum")) (has "v2" $version.enum)) $clientTLS -}}
{{- $ok = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $ok -}}
{{- fail (printf "the installed CompositeController CRD (compositecontrollers.metacontroller.k8s.io) is from a Metacontroller older than %s: its hooks take no clientTLS (or no sync hook version v2), so the API server would drop the chart's client certificate and hook version. Upgrade Metacontroller and its CRDs to %s or later first" $min $min) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Monitoring */}}

{{/*
Seconds in a Go duration (1h2m3.5s, 500ms, 1.5s), as a number: the form
compositeController.hookTimeout takes.
*/}}
{{- define "stackdome.durationFloatSeconds" -}}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" . -1 -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" . | float64 -}}
{{- $total = addf $total (mulf $n (get $units (regexReplaceAll "^[0-9]+(\\.[0-9]+)?" . ""))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
The latency the hook alert holds the p99 to: the largest bucket boundary of
stackdome_hook_request_duration_seconds (hooks/metrics.go; a test compares
this list with what the binary exports) within Metacontroller's hook timeout.
A quantile above the largest finite bucket reads as that bucket's bound, so
no threshold beyond it could ever be crossed.
*/}}
{{- define "stackdome.hookLatencyThreshold" -}}
{{- $budget := include "stackdome.durationFloatSeconds" .Values.compositeController.hookTimeout | float64 -}}
{{- $threshold := 0.0 -}}
{{- range list 0.0005 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1.0 2.5 5.0 10.0 -}}
{{- if le . $budget -}}{{- $threshold = . -}}{{- end -}}
{{- end -}}
{{- if eq $threshold 0.0 -}}
{{- fail (printf "compositeController.hookTimeout %s is below the smallest hook latency bucket (0.5ms)" .Values.compositeController.hookTimeout) -}}
{{- end -}}
{{- $threshold -}}
{{- end -}}

{{/* PromQL matchers for this release's stackdome series, as the ServiceMonitor scrapes them. */}}
{{- define "stackdome.metricsSelector" -}}
{{- default (printf "job=%q,namespace=%q" (include "stackdome.fullname" .) .Release.Namespace) .Values.prometheusRule.stackdomeSelector -}}
{{- end -}}

{{- define "stackdome.runbook" -}}
{{- printf "%s/blob/main/docs/operations.md#%s" .root.Chart.Home (lower .alert) -}}
{{- end -}}
