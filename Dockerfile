# The fabric twin's image, used by docker-compose.yml for the web server, the workers and the
# one-shot migrate step.
FROM node:20-bookworm-slim AS frontend
WORKDIR /build/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    TWIN_DATA_DIR=/data TWIN_STATIC_ROOT=/app/staticfiles DJANGO_SETTINGS_MODULE=twin.settings \
    TWIN_UPLOAD_TEMP_DIR=/tmp/twin-uploads
WORKDIR /app
# A CJK font: the what-if report's PDF and plots in Simplified Chinese (twin/whatif/plots.py).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-droid-fallback && rm -rf /var/lib/apt/lists/*
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
COPY --from=frontend /build/frontend/dist ./frontend/dist
RUN SECRET_KEY=image-build-only python manage.py collectstatic --noinput --verbosity 0 \
    && useradd --system --home /data twin && mkdir -p /data && chown twin /data
USER twin
EXPOSE 8000
CMD ["python", "manage.py", "web", "--", "-b", "0.0.0.0", "-p", "8000", "twin.asgi:application"]
