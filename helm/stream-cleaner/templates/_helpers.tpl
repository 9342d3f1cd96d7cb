{{/*
The chart name, overridable with nameOverride.
*/}}
{{- define "stream-cleaner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full object name: the release name, plus the chart name unless the release has it.
*/}}
{{- define "stream-cleaner.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "stream-cleaner.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "stream-cleaner.labels" -}}
{{ include "stream-cleaner.commonLabels" . }}
app.kubernetes.io/component: worker
{{- end }}

{{/*
Labels of every object except the component, which the topic Job sets to "topics".
*/}}
{{- define "stream-cleaner.commonLabels" -}}
helm.sh/chart: {{ include "stream-cleaner.chart" . }}
app.kubernetes.io/name: {{ include "stream-cleaner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: stream-cleaner
{{- end }}

{{/*
Selector labels: they select the worker pods, so they never change after an install.
*/}}
{{- define "stream-cleaner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stream-cleaner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: worker
{{- end }}

{{- define "stream-cleaner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "stream-cleaner.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "stream-cleaner.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "stream-cleaner.isSasl" -}}
{{- if hasPrefix "SASL_" .Values.kafka.securityProtocol }}true{{ end }}
{{- end }}

{{- define "stream-cleaner.isTls" -}}
{{- if has .Values.kafka.securityProtocol (list "SSL" "SASL_SSL") }}true{{ end }}
{{- end }}

{{- define "stream-cleaner.caDir" -}}
/etc/stream-cleaner/kafka-ca
{{- end }}

{{/*
Fail with a clear message on values that cannot work together. Included by the Deployment,
which every install renders.
*/}}
{{- define "stream-cleaner.validate" -}}
{{- if and .Values.autoscaling.enabled .Values.keda.enabled }}
{{- fail "autoscaling.enabled and keda.enabled are both true: choose one. A HorizontalPodAutoscaler and a KEDA ScaledObject (which makes its own HPA) would fight over the replica count." }}
{{- end }}
{{- if not .Values.kafka.bootstrapServers }}
{{- fail "kafka.bootstrapServers is required: the brokers as host:port, comma-separated." }}
{{- end }}
{{- if and .Values.keda.enabled (gt (int .Values.keda.maxReplicas) (int .Values.topics.partitions)) }}
{{- fail (printf "keda.maxReplicas (%d) is above topics.partitions (%d): workers beyond the input topic's partitions get no partition and stay idle." (int .Values.keda.maxReplicas) (int .Values.topics.partitions)) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) (int .Values.topics.partitions)) }}
{{- fail (printf "autoscaling.maxReplicas (%d) is above topics.partitions (%d): workers beyond the input topic's partitions get no partition and stay idle." (int .Values.autoscaling.maxReplicas) (int .Values.topics.partitions)) }}
{{- end }}
{{- if and (include "stream-cleaner.isSasl" .) (not .Values.kafka.existingSecret) }}
{{- fail (printf "kafka.securityProtocol is %s: set kafka.existingSecret to a Secret with the SASL username and password." .Values.kafka.securityProtocol) }}
{{- end }}
{{- if and .Values.kafka.caSecret (not (include "stream-cleaner.isTls" .)) }}
{{- fail (printf "kafka.caSecret is set but kafka.securityProtocol is %s: use SSL or SASL_SSL." .Values.kafka.securityProtocol) }}
{{- end }}
{{- range .Values.extraVolumes }}
{{- if has .name (list "tmp" "kafka-ca" "model") }}
{{- fail (printf "extraVolumes: the name %s is the chart's own volume (tmp, kafka-ca, model): choose another." .name) }}
{{- end }}
{{- end }}
{{- range $monitor := list "serviceMonitor" "prometheusRule" }}
{{- if index $.Values $monitor "labels" }}
{{- fail (printf "%s.labels is now %s.additionalLabels (the name community charts use): rename it." $monitor $monitor) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The worker's settings as STREAM_CLEANER_* variables (a YAML map of strings): the ConfigMap's
data, and the topic Job's env (a pre-install hook runs before the ConfigMap exists).
*/}}
{{- define "stream-cleaner.config" -}}
STREAM_CLEANER_KAFKA_BOOTSTRAP_SERVERS: {{ .Values.kafka.bootstrapServers | quote }}
STREAM_CLEANER_KAFKA_SECURITY_PROTOCOL: {{ .Values.kafka.securityProtocol | quote }}
{{- if include "stream-cleaner.isSasl" . }}
STREAM_CLEANER_KAFKA_SASL_MECHANISM: {{ .Values.kafka.saslMechanism | quote }}
{{- end }}
{{- if and .Values.kafka.caSecret (include "stream-cleaner.isTls" .) }}
STREAM_CLEANER_KAFKA_SSL_CAFILE: {{ printf "%s/%s" (include "stream-cleaner.caDir" .) .Values.kafka.caKey | quote }}
{{- end }}
STREAM_CLEANER_WORKER_INPUT_TOPIC: {{ .Values.topics.input | quote }}
STREAM_CLEANER_WORKER_DOCUMENTS_TOPIC: {{ .Values.topics.documents | quote }}
STREAM_CLEANER_WORKER_SENTENCE_SCORES_TOPIC: {{ .Values.topics.sentenceScores | quote }}
STREAM_CLEANER_WORKER_DEAD_LETTER_TOPIC: {{ .Values.topics.deadLetter | quote }}
STREAM_CLEANER_WORKER_GROUP_ID: {{ .Values.worker.groupId | quote }}
STREAM_CLEANER_WORKER_BATCH_SIZE: {{ .Values.worker.batchSize | int64 | toString | quote }}
STREAM_CLEANER_WORKER_BATCH_WITHIN_SECONDS: {{ .Values.worker.batchWithinSeconds | toString | quote }}
STREAM_CLEANER_WORKER_BATCH_MAX_BYTES: {{ .Values.worker.batchMaxBytes | int64 | toString | quote }}
STREAM_CLEANER_WORKER_MAX_PAGE_BYTES: {{ .Values.worker.maxPageBytes | int64 | toString | quote }}
STREAM_CLEANER_WORKER_MAX_MESSAGE_BYTES: {{ .Values.worker.maxMessageBytes | int64 | toString | quote }}
STREAM_CLEANER_WORKER_WEB_PORT: {{ .Values.worker.webPort | int64 | toString | quote }}
STREAM_CLEANER_WEB_HEADER_TIMEOUT_SECONDS: {{ .Values.web.headerTimeoutSeconds | toString | quote }}
STREAM_CLEANER_WEB_MAX_CONNECTIONS: {{ .Values.web.maxConnections | int64 | toString | quote }}
STREAM_CLEANER_WEB_ENABLED: {{ .Values.webDemo.enabled | toString | quote }}
STREAM_CLEANER_WEB_MAX_BODY_BYTES: {{ .Values.webDemo.maxBodyBytes | int64 | toString | quote }}
STREAM_CLEANER_WEB_MAX_REQUEST_SECONDS: {{ .Values.webDemo.maxRequestSeconds | toString | quote }}
STREAM_CLEANER_WEB_MAX_PENDING_REQUESTS: {{ .Values.webDemo.maxPendingRequests | int64 | toString | quote }}
STREAM_CLEANER_WEB_MAX_BUSY_SHARE: {{ .Values.webDemo.maxBusyShare | toString | quote }}
STREAM_CLEANER_WORKER_SESSION_TIMEOUT_SECONDS: {{ .Values.worker.sessionTimeoutSeconds | toString | quote }}
STREAM_CLEANER_WORKER_HEARTBEAT_INTERVAL_SECONDS: {{ .Values.worker.heartbeatIntervalSeconds | toString | quote }}
STREAM_CLEANER_WORKER_REQUEST_TIMEOUT_SECONDS: {{ .Values.worker.requestTimeoutSeconds | toString | quote }}
STREAM_CLEANER_WORKER_COMMIT_INTERVAL_SECONDS: {{ .Values.worker.commitIntervalSeconds | toString | quote }}
STREAM_CLEANER_WORKER_FETCH_MAX_WAIT_SECONDS: {{ .Values.worker.fetchMaxWaitSeconds | toString | quote }}
STREAM_CLEANER_WORKER_COMPRESSION: {{ .Values.worker.compression | quote }}
STREAM_CLEANER_WORKER_BROKER_WAIT_SECONDS: {{ .Values.worker.brokerWaitSeconds | toString | quote }}
STREAM_CLEANER_WORKER_OFFSET_RESET: {{ .Values.worker.offsetReset | quote }}
STREAM_CLEANER_WORKER_ALLOW_UNTESTED_CLIENTS: {{ .Values.worker.allowUntestedClients | toString | quote }}
STREAM_CLEANER_WORKER_SITE_TEMPLATES: {{ .Values.siteTemplates.enabled | toString | quote }}
STREAM_CLEANER_WORKER_SITE_PARTITIONS: {{ .Values.topics.partitions | int64 | toString | quote }}
STREAM_CLEANER_SITE_SITE_KEY: {{ .Values.siteTemplates.siteKey | quote }}
STREAM_CLEANER_SITE_WINDOW_PAGES: {{ .Values.siteTemplates.windowPages | int64 | toString | quote }}
STREAM_CLEANER_SITE_MIN_PAGES: {{ .Values.siteTemplates.minPages | int64 | toString | quote }}
STREAM_CLEANER_SITE_MIN_SHARE: {{ .Values.siteTemplates.minShare | toString | quote }}
STREAM_CLEANER_SITE_MAX_SITES: {{ .Values.siteTemplates.maxSites | int64 | toString | quote }}
STREAM_CLEANER_SITE_RULE_WITH_LABELLER: {{ .Values.siteTemplates.ruleWithLabeller | toString | quote }}
STREAM_CLEANER_WORKER_REKEY: {{ .Values.siteTemplates.rekey | quote }}
STREAM_CLEANER_WORKER_SITE_TOPIC: {{ .Values.siteTemplates.siteTopic | quote }}
STREAM_CLEANER_WORKER_WARMUP_SECONDS: {{ .Values.siteTemplates.warmupSeconds | toString | quote }}
STREAM_CLEANER_WORKER_WARMUP_MAX_PAGES: {{ .Values.siteTemplates.warmupMaxPages | int64 | toString | quote }}
STREAM_CLEANER_MODE: {{ .Values.cleaner.mode | quote }}
STREAM_CLEANER_SENTENCE_FILTER: {{ .Values.cleaner.sentenceFilter | quote }}
STREAM_CLEANER_CONTENT_GUARD: {{ .Values.cleaner.contentGuard | toString | quote }}
STREAM_CLEANER_MULTILINGUAL_LABELLER: {{ .Values.cleaner.multilingualLabeller | quote }}
STREAM_CLEANER_MAX_SENTENCE_PERPLEXITY: {{ .Values.cleaner.maxSentencePerplexity | toString | quote }}
STREAM_CLEANER_MAX_SENTENCE_TOKENS: {{ .Values.cleaner.maxSentenceTokens | int64 | toString | quote }}
STREAM_CLEANER_MAX_WORD_CHARS: {{ .Values.cleaner.maxWordChars | int64 | toString | quote }}
STREAM_CLEANER_PARSER: {{ .Values.cleaner.parser | quote }}
STREAM_CLEANER_MAX_DOCUMENT_BYTES: {{ .Values.cleaner.maxDocumentBytes | int64 | toString | quote }}
STREAM_CLEANER_MAX_BLOCKS: {{ .Values.cleaner.maxBlocks | int64 | toString | quote }}
STREAM_CLEANER_TIME_BUDGET_SECONDS: {{ .Values.cleaner.timeBudgetSeconds | toString | quote }}
{{- if .Values.model.file }}
STREAM_CLEANER_MODEL_PATH: {{ printf "%s/%s" (trimSuffix "/" .Values.model.mountPath) .Values.model.file | quote }}
{{- end }}
{{- if .Values.model.labellerFile }}
STREAM_CLEANER_LABELLER_PATH: {{ printf "%s/%s" (trimSuffix "/" .Values.model.mountPath) .Values.model.labellerFile | quote }}
{{- end }}
{{- if .Values.model.siteLabellerFile }}
STREAM_CLEANER_SITE_LABELLER_PATH: {{ printf "%s/%s" (trimSuffix "/" .Values.model.mountPath) .Values.model.siteLabellerFile | quote }}
{{- end }}
{{- if .Values.model.multilingualLabellerFile }}
STREAM_CLEANER_MULTILINGUAL_LABELLER_PATH: {{ printf "%s/%s" (trimSuffix "/" .Values.model.mountPath) .Values.model.multilingualLabellerFile | quote }}
{{- end }}
{{- if .Values.model.pageTypesFile }}
STREAM_CLEANER_PAGE_TYPE_MODEL_PATH: {{ printf "%s/%s" (trimSuffix "/" .Values.model.mountPath) .Values.model.pageTypesFile | quote }}
{{- end }}
{{- with .Values.model.languageFiles }}
{{- $dir := trimSuffix "/" $.Values.model.mountPath }}
{{- $entries := list }}
{{- range $language, $file := . }}
{{- $entries = append $entries (printf "%s=%s/%s" $language $dir $file) }}
{{- end }}
STREAM_CLEANER_MODELS: {{ join "," $entries | quote }}
{{- end }}
{{- end }}

{{/*
The SASL credentials from the existing Secret, as env entries.
*/}}
{{- define "stream-cleaner.secretEnv" -}}
{{- if include "stream-cleaner.isSasl" . -}}
- name: STREAM_CLEANER_KAFKA_SASL_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ .Values.kafka.existingSecret }}
      key: {{ .Values.kafka.usernameKey }}
- name: STREAM_CLEANER_KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.kafka.existingSecret }}
      key: {{ .Values.kafka.passwordKey }}
{{- end }}
{{- end }}

{{/*
The writable /tmp and, with TLS and a CA Secret, the CA: volumes and their mounts.
*/}}
{{- define "stream-cleaner.kafkaCaVolume" -}}
{{- if and .Values.kafka.caSecret (include "stream-cleaner.isTls" .) -}}
- name: kafka-ca
  secret:
    secretName: {{ .Values.kafka.caSecret }}
    items:
      - key: {{ .Values.kafka.caKey }}
        path: {{ .Values.kafka.caKey }}
{{- end }}
{{- end }}

{{- define "stream-cleaner.kafkaCaMount" -}}
{{- if and .Values.kafka.caSecret (include "stream-cleaner.isTls" .) -}}
- name: kafka-ca
  mountPath: {{ include "stream-cleaner.caDir" . }}
  readOnly: true
{{- end }}
{{- end }}
