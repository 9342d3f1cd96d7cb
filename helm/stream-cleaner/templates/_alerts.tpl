{{/*
The alert rule groups: dict with job, lagThreshold, stalledMinutes, deadLetterRateThreshold.
The lag is the largest any worker reports for a partition (after a rebalance the old owner
may still report the partition until it is scraped again).
*/}}
{{- define "stream-cleaner.alertGroups" -}}
{{- $sel := printf "job=\"%s\"" .job -}}
{{- $lag := printf "sum by (topic) (max by (topic, partition) (stream_cleaner_consumer_lag{%s}))" $sel -}}
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
          summary: "stream-cleaner falls behind on {{ "{{" }} $labels.topic {{ "}}" }}"
          description: >-
            The consumer lag of {{ "{{" }} $labels.topic {{ "}}" }} is {{ "{{" }} $value {{ "}}" }}
            messages and has grown for 15 minutes. Add workers (up to the partition count)
            or check the per-stage latency panel for a slow stage.
      - alert: StreamCleanerStalled
        expr: >-
          (time() - max(stream_cleaner_last_processed_timestamp_seconds{ {{- $sel -}} }) > {{ mul .stalledMinutes 60 }})
          and on ()
          (sum(stream_cleaner_consumer_lag{ {{- $sel -}} }) > 0)
        for: 2m
        labels:
          severity: critical
        annotations:
          summary: "stream-cleaner processed nothing for {{ .stalledMinutes }} minutes while input waits"
          description: >-
            No input message was acknowledged for {{ .stalledMinutes }} minutes although the
            input topic has lag. Check /readyz of the workers, the broker, and the logs for
            publish failures.
      - alert: StreamCleanerDeadLetterRateHigh
        expr: >-
          sum by (reason) (rate(stream_cleaner_documents_dead_lettered_total{ {{- $sel -}} , reason!="not_a_page"}[10m])) > {{ .deadLetterRateThreshold }}
        for: 10m
        labels:
          severity: warning
        annotations:
          summary: "stream-cleaner dead-letters {{ "{{" }} $value | humanize {{ "}}" }}/s as {{ "{{" }} $labels.reason {{ "}}" }}"
          description: >-
            More than {{ .deadLetterRateThreshold }} input messages per second end in the
            dead-letter topic with reason {{ "{{" }} $labels.reason {{ "}}" }}. Look at a few with
            `stream-cleaner tail clean.dead-letter.v1 --max 5`. (not_a_page, the crawl's
            redirects, error pages and assets, is traffic rather than a fault: left out.)
      - alert: StreamCleanerOffsetReset
        expr: >-
          sum by (reason) (increase(stream_cleaner_offset_resets_total{ {{- $sel -}} }[15m])) > 0
        labels:
          severity: critical
        annotations:
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
        expr: up{ {{- $sel -}} } == 0
        for: 5m
        labels:
          severity: warning
        annotations:
          summary: "stream-cleaner worker {{ "{{" }} $labels.instance {{ "}}" }} is down"
          description: >-
            Prometheus could not scrape /metrics of {{ "{{" }} $labels.instance {{ "}}" }} for 5 minutes.
      - alert: StreamCleanerAbsent
        expr: absent(up{ {{- $sel -}} })
        for: 10m
        labels:
          severity: critical
        annotations:
          summary: "no stream-cleaner worker is scraped"
          description: >-
            Prometheus has no target with {{ $sel }}: no worker runs, or the scrape
            configuration (ServiceMonitor) does not find them.
{{- end }}
