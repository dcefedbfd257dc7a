# The deidloop image, shared by the web server and the Celery workers (docker-compose.yml).

# Third-party browser assets (htmx) come from the npm registry, as package.json pins them.
FROM node:22-slim AS browser-assets
WORKDIR /assets
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DEIDLOOP_DATA_DIR=/data \
    DEIDLOOP_ENV=production
WORKDIR /app

# torch first, from its CPU-only index: the default index serves a multi-gigabyte CUDA build. The
# constraint keeps the pinned set from replacing it. Dependencies sit in their own layer, so a code
# change does not reinstall them.
COPY requirements/torch.txt requirements/lock.txt requirements/
RUN pip install -r requirements/torch.txt --index-url https://download.pytorch.org/whl/cpu \
 && pip install -r requirements/lock.txt -c requirements/torch.txt

COPY --from=browser-assets /assets/node_modules ./node_modules
COPY . .
# The Spanish interface: its .mo files are built here, never committed (polib, no GNU gettext needed).
RUN python -m config.i18n

# Run unprivileged; the data folder belongs to that user so a fresh named volume inherits its owner.
RUN useradd --system --create-home --home-dir /home/deidloop deidloop \
 && mkdir -p /data \
 && chown deidloop:deidloop /data
USER deidloop
VOLUME ["/data"]
# Served behind the TLS-terminating reverse proxy (docker-compose.yml), whose forwarding headers the web processes trust.
EXPOSE 8000
ENV DEIDLOOP_HOST=0.0.0.0 DEIDLOOP_PORT=8000
CMD ["python", "-m", "config.launcher", "serve"]
