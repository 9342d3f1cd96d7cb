{{/*
The alert rule groups: dict with selector, lagThreshold, stalledMinutes,
deadLetterRateThreshold and runbookUrl.
selector: the label matchers of the workers' series (`job="cleaner-stream-cleaner"`); empty,
the rules select the workers by their metrics' names: a target is a worker when it exported
stream_cleaner_documents_received_total in the last hour (deploy/prometheus/alerts.yaml, for
a Prometheus whose scrape job may have any name).
The lag is the largest any worker reports for a partition (after a rebalance the old owner
may still report the partition until it is scraped again).
Each alert's runbook_url is its section of docs/runbook.md (the anchor: its name in lower case).
*/}}
{{- define "stream-cleaner.alertGroups" -}}
{{- $m := .selector -}}
{{- $sel := ternary (printf "{%s}" $m) "" (ne $m "") -}}
{{- $dead := printf "{%s}" (join ", " (compact (list $m "reason!=\"not_a_page\""))) -}}
{{- $lag := printf "sum by (topic) (max by (topic, partition) (stream_cleaner_consumer_lag%s))" $sel -}}
groups:
  - name: stream-cleaner
    rules:
      - alert: StreamCleanerLagGrowing
        expr: >-
          ({{ $lag }} > {{ .lagThreshold }})
          and
          (deriv({{ $lag }}[15m:1m]) > 0)
        for: 15m
        labels:
          severity: warning
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleanerlaggrowing" | quote }}
          summary: "stream-cleaner falls behind on {{ "{{" }} $labels.topic {{ "}}" }}"
          description: >-
            The consumer lag of {{ "{{" }} $labels.topic {{ "}}" }} is {{ "{{" }} $value {{ "}}" }}
            messages and has grown for 15 minutes. Add workers (up to the partition count)
            or check the per-stage latency panel for a slow stage.
      - alert: StreamCleanerStalled
        expr: >-
          (time() - max(stream_cleaner_last_processed_timestamp_seconds{{ $sel }}) > {{ mul .stalledMinutes 60 }})
          and on ()
          (sum(stream_cleaner_consumer_lag{{ $sel }}) > 0)
        for: 2m
        labels:
          severity: critical
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleanerstalled" | quote }}
          summary: "stream-cleaner processed nothing for {{ .stalledMinutes }} minutes while input waits"
          description: >-
            No input message was acknowledged for {{ .stalledMinutes }} minutes although the
            input topic has lag. Check /readyz of the workers, the broker, and the logs for
            publish failures.
      - alert: StreamCleanerDeadLetterRateHigh
        expr: >-
          sum by (reason) (rate(stream_cleaner_documents_dead_lettered_total{{ $dead }}[10m])) > {{ .deadLetterRateThreshold }}
        for: 10m
        labels:
          severity: warning
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleanerdeadletterratehigh" | quote }}
          summary: "stream-cleaner dead-letters {{ "{{" }} $value | humanize {{ "}}" }}/s as {{ "{{" }} $labels.reason {{ "}}" }}"
          description: >-
            More than {{ .deadLetterRateThreshold }} input messages per second end in the
            dead-letter topic with reason {{ "{{" }} $labels.reason {{ "}}" }}. Look at a few with
            `stream-cleaner tail clean.dead-letter.v1 --max 5`. (not_a_page, the crawl's
            redirects, error pages and assets, is traffic rather than a fault: left out.)
      - alert: StreamCleanerOffsetReset
        expr: >-
          sum by (reason) (increase(stream_cleaner_offset_resets_total{{ $sel }}[15m])) > 0
        labels:
          severity: critical
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleaneroffsetreset" | quote }}
          summary: "stream-cleaner read input partitions again elsewhere than their committed offset ({{ "{{" }} $labels.reason {{ "}}" }})"
          description: >-
            An input partition's log no longer held the offset the group had committed:
            past_log_end means the broker lost records (a topic re-created, an unclean leader
            election, a broker without its storage), before_log_start that retention deleted
            records before they were cleaned. The worker read the partition again per its
            offset_reset policy (earliest: from the log start, some pages cleaned twice;
            latest: what the log held was skipped). Pages lost by the broker are not in the
            outputs: check the broker, and the worker logs for "where reading was due".
      - alert: StreamCleanerWorkerDown
        {{- if $m }}
        expr: up{{ $sel }} == 0
        {{- else }}
        expr: >-
          up == 0
          and on (job, instance)
          present_over_time(stream_cleaner_documents_received_total[1h])
        {{- end }}
        for: 5m
        labels:
          severity: warning
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleanerworkerdown" | quote }}
          summary: "stream-cleaner worker {{ "{{" }} $labels.instance {{ "}}" }} is down"
          description: >-
            Prometheus could not scrape /metrics of {{ "{{" }} $labels.instance {{ "}}" }} for 5 minutes.
      - alert: StreamCleanerAbsent
        {{- if $m }}
        expr: absent(up{{ $sel }})
        {{- else }}
        expr: absent(stream_cleaner_documents_received_total)
        {{- end }}
        for: 10m
        labels:
          severity: critical
        annotations:
          runbook_url: {{ printf "%s#%s" .runbookUrl "streamcleanerabsent" | quote }}
          summary: "no stream-cleaner worker is scraped"
          description: >-
            {{- if $m }}
            Prometheus has no target with {{ $m }}: no worker runs, or the scrape
            configuration (ServiceMonitor) does not find them.
            {{- else }}
            Prometheus scrapes no target that exports stream_cleaner_documents_received_total:
            no worker runs, every worker is down, or the scrape configuration does not find them.
            {{- end }}
{{- end }}
