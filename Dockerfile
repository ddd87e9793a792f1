# syntax=docker/dockerfile:1
# hitl-bot: `docker build -t hitl-bot . && docker run -p 3000:3000 --env-file .env hitl-bot`

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
# Build the wheels here so the runtime image carries no build tools or sources. The server
# extra: serve needs Slack, the web server and Redis (the bare package is an agent's client).
RUN pip wheel --no-cache-dir --wheel-dir /wheels '.[server]'

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HITL_HOST=0.0.0.0 \
    HITL_PORT=3000 \
    HITL_DATA_DIR=/data
RUN useradd --create-home --uid 10001 hitl \
 && mkdir -p /data/archive && chown hitl /data /data/archive
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels 'hitl-bot[server]' \
 && rm -rf /wheels
USER hitl
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import os,urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('HITL_PORT','3000'), timeout=2)"
CMD ["hitl-bot", "serve"]
