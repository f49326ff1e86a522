{{/*
Helpers of the syncd chart. Most take a dict {root, ws}: the chart's root
context and one entry of .Values.workspaces.
*/}}

{{/* The name of a workspace's objects: <release>-<workspace>. */}}
{{- define "syncd.fullname" -}}
{{- $name := printf "%s-%s" .root.Release.Name .ws.name -}}
{{- if gt (len $name) 52 -}}
{{- fail (printf "workspaces[%s]: %q is %d characters; release name and workspace name together must stay within 52 (a StatefulSet's pods carry it in a 63-character label)" .ws.name $name (len $name)) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* Labels that select a workspace's pod. */}}
{{- define "syncd.selectorLabels" -}}
app.kubernetes.io/name: syncd
app.kubernetes.io/instance: {{ .root.Release.Name }}
syncd.io/workspace: {{ .ws.name }}
{{- end -}}

{{/* Labels of every object of a workspace. */}}
{{- define "syncd.labels" -}}
{{ include "syncd.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* The image reference. */}}
{{- define "syncd.image" -}}
{{- printf "%s:%s" .root.Values.image.repository (.root.Values.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}

{{/* A workspace setting, falling back to .Values.defaults: {root, ws, key}. */}}
{{- define "syncd.setting" -}}
{{- $v := index .ws .key -}}
{{- if kindIs "invalid" $v -}}{{- $v = index .root.Values.defaults .key -}}{{- end -}}
{{- toYaml $v -}}
{{- end -}}

{{/*
Checks a workspace's entry: a valid name, one configuration source, and no
literal secret in the configuration.
*/}}
{{- define "syncd.checkWorkspace" -}}
{{- $ws := .ws -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" (toString $ws.name)) -}}
{{- fail (printf "workspaces: name %q: use lower-case letters, digits and - (it names Kubernetes objects)" (toString $ws.name)) -}}
{{- end -}}
{{- if and $ws.config $ws.existingConfigMap -}}
{{- fail (printf "workspaces[%s]: give config or existingConfigMap, not both" $ws.name) -}}
{{- end -}}
{{- if not (or $ws.config $ws.existingConfigMap) -}}
{{- fail (printf "workspaces[%s]: config is required (the syncd.yaml of this workspace), or existingConfigMap naming a ConfigMap that holds it" $ws.name) -}}
{{- end -}}
{{- if not (or $ws.secrets $ws.secretEnv) -}}
{{- fail (printf "workspaces[%s]: secrets is required: the names of the Secrets holding WORKSPACE_API_KEY and SYNCD_ADMIN_TOKEN (and the connectors' credentials)" $ws.name) -}}
{{- end -}}
{{- if $ws.config -}}
{{- include "syncd.checkSecrets" (dict "value" $ws.config "path" (printf "workspaces[%s].config" $ws.name)) -}}
{{- end -}}
{{- end -}}

{{/*
Fails when a key that holds a secret (apiKey, token, dsn, password...)
has a literal value instead of a ${VAR} reference: the configuration
lands in a ConfigMap, which is not a place for secrets.
*/}}
{{- define "syncd.checkSecrets" -}}
{{- $path := .path -}}
{{- $secretKeys := list "apikey" "token" "apitoken" "accesstoken" "refreshtoken" "dsn" "password" "clientsecret" "clientid" "privatekey" "secret" -}}
{{- if kindIs "map" .value -}}
{{- range $k, $v := .value -}}
{{- $p := printf "%s.%s" $path $k -}}
{{- if and (kindIs "string" $v) (has (lower $k) $secretKeys) (ne $v "") (not (contains "${" $v)) -}}
{{- fail (printf "%s: a literal secret in the configuration; write ${VAR} here and put VAR in one of the workspace's secrets (the configuration is rendered into a ConfigMap)" $p) -}}
{{- end -}}
{{- include "syncd.checkSecrets" (dict "value" $v "path" $p) -}}
{{- end -}}
{{- else if kindIs "slice" .value -}}
{{- range $i, $v := .value -}}
{{- $p := printf "%s[%d]" $path $i -}}
{{- if and (kindIs "map" $v) $v.name -}}{{- $p = printf "%s[%s]" $path (toString $v.name) -}}{{- end -}}
{{- include "syncd.checkSecrets" (dict "value" $v "path" $p) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The workspace's syncd.yaml: its config with what the chart owns set:
the state file on the volume, the admin API and the webhook receiver
listening on the pod's ports, the admin token from the environment, and
the public webhook URL from the Ingress host when the config has none.
*/}}
{{- define "syncd.config" -}}
{{- $v := .root.Values -}}
{{- $cfg := deepCopy .ws.config -}}
{{- $wsp := default dict $cfg.workspace -}}
{{- if and (not $wsp.baseURL) $v.defaults.workspaceBaseURL -}}{{- $_ := set $wsp "baseURL" $v.defaults.workspaceBaseURL -}}{{- end -}}
{{- $_ := set $cfg "workspace" $wsp -}}
{{- $_ = set $cfg "state" (merge (dict "path" "/var/lib/syncd/syncd.db") (omit (default dict $cfg.state) "path")) -}}
{{- $admin := default dict $cfg.admin -}}
{{- $_ = set $admin "listen" (printf "0.0.0.0:%v" $v.ports.admin) -}}
{{- if not (hasKey $admin "token") -}}{{- $_ = set $admin "token" "${SYNCD_ADMIN_TOKEN}" -}}{{- end -}}
{{- $_ = set $cfg "admin" $admin -}}
{{- $hooks := default dict $cfg.webhooks -}}
{{- $_ = set $hooks "listen" (printf "0.0.0.0:%v" $v.ports.webhooks) -}}
{{- if not $hooks.path -}}{{- $_ = set $hooks "path" $v.webhookPath -}}{{- end -}}
{{- if and $v.ingress.enabled .ws.ingress (not $hooks.publicURL) -}}
{{- $_ = set $hooks "publicURL" (printf "https://%s%s" .ws.ingress.host $hooks.path) -}}
{{- end -}}
{{- $_ = set $cfg "webhooks" $hooks -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The name of the ConfigMap holding a workspace's syncd.yaml. */}}
{{- define "syncd.configMapName" -}}
{{- .ws.existingConfigMap | default (include "syncd.fullname" .) -}}
{{- end -}}

{{/* envFrom: every Secret of the workspace, the chart's own included. */}}
{{- define "syncd.envFrom" -}}
{{- range .ws.secrets }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- if .ws.secretEnv }}
- secretRef:
    name: {{ include "syncd.fullname" . }}-env
{{- end }}
{{- end -}}
