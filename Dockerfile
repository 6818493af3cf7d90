# recipe-sync: the GitHub App (`serve`, `worker`, `migrate`) and the CLI in one image.
# Build:  docker build -t recipe-sync .       Run it: compose.yaml, docs/deploy.md.
#
# Behind a TLS-intercepting proxy or a private package index, hand the build the CA bundle
# and a pip.conf as build secrets (used by the install step only, stored in no layer):
#   docker build --secret id=ca-bundle,src=/etc/ssl/certs/ca-certificates.crt \
#                --secret id=pip-conf,src=pip.conf -t recipe-sync .
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rules ./rules
COPY fixtures ./fixtures
COPY bot ./bot
# The README's install (a virtual environment, then pip installs the project), without the
# development extras and not editable.
RUN --mount=type=secret,id=ca-bundle --mount=type=secret,id=pip-conf \
    if [ -s /run/secrets/pip-conf ]; then export PIP_CONFIG_FILE=/run/secrets/pip-conf; fi \
 && if [ -s /run/secrets/ca-bundle ]; then export PIP_CERT=/run/secrets/ca-bundle; fi \
 && python3 -m venv /opt/recipe-sync \
 && /opt/recipe-sync/bin/pip install --no-cache-dir --disable-pip-version-check /src

FROM ${BASE}
# git: the service keeps bare mirrors of the repositories it reads and pushes alignment
# branches; python3: the interpreter of the virtual environment copied below.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 recipe-sync \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/recipe-sync \
      --create-home --shell /usr/sbin/nologin recipe-sync
COPY --from=build /opt/recipe-sync /opt/recipe-sync
ENV PATH=/opt/recipe-sync/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    RECIPE_SYNC_DATA_DIR=/var/lib/recipe-sync
USER 10001:10001
WORKDIR /var/lib/recipe-sync
VOLUME ["/var/lib/recipe-sync"]
EXPOSE 8000
# Ready: database and queue reachable, GitHub credentials configured and usable (/readyz
# answers 503 otherwise, and urlopen raises). RECIPE_SYNC_HEALTH_URL: when `serve` listens
# elsewhere. A `worker` container has no web port: compose.yaml gives it its own check.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request as u; u.urlopen(os.environ.get('RECIPE_SYNC_HEALTH_URL', 'http://127.0.0.1:8000/readyz'), timeout=4)"]
ENTRYPOINT ["recipe-sync"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
