# stream-cleaner worker image: `docker build -t stream-cleaner:0.1.0 .` (see README, Deploying).
#
# Two stages on the same Python base, so the virtualenv built in the first runs unchanged in
# the second: `build` compiles kenlm and builds every wheel, `runtime` gets the finished venv
# and nothing else (no compiler, no headers, no pip cache, no wheels).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
# kenlm's Python module compiles with cmake and links zlib, bzip2 and xz: build stage only.
# Debian bookworm's versions are fixed by the release; pinning them would break on every
# security update, so the base image tag is what pins this stage.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake \
        zlib1g-dev libbz2-dev liblzma-dev \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md LICENSE ./
COPY stream_cleaner ./stream_cleaner
COPY scripts/build_native.py ./scripts/
# Wheels first: kenlm compiles here, and the stream-cleaner wheel compiles its native
# speed-ups against the sdists (from PyPI) of the selectolax and kenlm versions it pins. Then
# the runtime venv, installed from those wheels alone, and a check that every native module
# loads in it (else the build fails: the worker would run at half speed).
RUN python -m pip wheel --wheel-dir /wheels ".[stream]" \
    && python -m venv /opt/stream-cleaner \
    && /opt/stream-cleaner/bin/pip install --no-index --find-links /wheels "stream-cleaner[stream]" \
    && /opt/stream-cleaner/bin/python -m stream_cleaner._native

FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="stream-cleaner" \
      org.opencontainers.image.description="Streaming web-page cleaner: KenLM sentence perplexity, Kafka worker (Faust)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim-bookworm"
# A fixed, unprivileged UID/GID that matches the chart's securityContext (runAsUser 10001).
RUN groupadd --system --gid 10001 stream-cleaner \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
        --shell /usr/sbin/nologin stream-cleaner
COPY --from=build /opt/stream-cleaner /opt/stream-cleaner
# The default model (en-wiki-bigram.klm) is package data inside the venv. To use another
# one, mount it (for example at /models) and set STREAM_CLEANER_MODEL_PATH=/models/my.klm.
# The root filesystem may be read-only: Python writes no bytecode, Faust's data directory
# and every other temporary file go to /tmp (mount a writable volume there).
ENV PATH=/opt/stream-cleaner/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TMPDIR=/tmp \
    STREAM_CLEANER_WORKER_WEB_PORT=6066
USER 10001:10001
WORKDIR /tmp
# /metrics, /healthz, /readyz
EXPOSE 6066
# For docker run; Kubernetes ignores it and uses the chart's probes on the same pages.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('STREAM_CLEANER_WORKER_WEB_PORT', '6066') + '/healthz', timeout=4)"]
ENTRYPOINT ["stream-cleaner"]
CMD ["worker"]
