{{/*
Names are fixed: the operator is a cluster singleton (one ClusterRole, one
MutatingWebhookConfiguration), and the RBAC markers name the webhook
configuration and the certificate Secret.
*/}}
{{- define "kubepact.operatorName" -}}kubepact-operator{{- end -}}
{{- define "kubepact.webhookServiceName" -}}kubepact-webhook{{- end -}}
{{- define "kubepact.webhookConfigName" -}}kubepact-injector{{- end -}}
{{- define "kubepact.webhookSecretName" -}}kubepact-webhook-cert{{- end -}}
{{- define "kubepact.leaderElectionName" -}}kubepact-leader-election{{- end -}}
{{- define "kubepact.fleetReaderName" -}}kubepact-fleet-reader{{- end -}}

{{- define "kubepact.selectorLabels" -}}
app.kubernetes.io/name: kubepact
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "kubepact.labels" -}}
{{ include "kubepact.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The image: repository:tag, or repository:tag@digest; the tag defaults to appVersion. */}}
{{- define "kubepact.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if eq $tag "latest" -}}
{{- fail "image.tag \"latest\" is not accepted: pin a version tag (default: the chart's appVersion) and, better, image.digest" -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
GOMEMLIMIT: 90% of the memory limit (Mi or Gi, as the schema accepts), in MiB,
so the Go runtime collects before the kernel kills.
*/}}
{{- define "kubepact.gomemlimit" -}}
{{- $lim := .Values.resources.limits.memory -}}
{{- $mi := 0 -}}
{{- if hasSuffix "Gi" $lim -}}
{{- $mi = mul (trimSuffix "Gi" $lim | atoi) 1024 -}}
{{- else -}}
{{- $mi = trimSuffix "Mi" $lim | atoi -}}
{{- end -}}
{{- printf "%dMiB" (div (mul $mi 9) 10) -}}
{{- end -}}

{{/*
The documents of a manifest file copied from config/ by `make manifests`,
as a list of objects.
*/}}
{{- define "kubepact.docs" -}}
{{- $out := list -}}
{{- range $doc := splitList "\n---" (printf "\n%s" .) -}}
{{- $o := fromYaml $doc -}}
{{- if $o.kind -}}{{- $out = append $out $o -}}{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
