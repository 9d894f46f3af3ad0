# memwal-mcp as a streamable-HTTP MCP server.
#   docker build -t memwal-mcp .
#   docker run --rm -v memwal-data:/data memwal-mcp memwal-mcp token create --owner you
#   docker run -p 8765:8765 -v memwal-data:/data memwal-mcp
# The endpoint is http://localhost:8765/mcp; send the token as `Authorization: Bearer ...`.
# Without a token the server refuses to listen on 0.0.0.0 (add --insecure-no-auth to
# the command only on a private network).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    MEMWAL_DB_PATH=/data/memwal.db \
    XDG_CACHE_HOME=/var/cache/memwal

WORKDIR /app
COPY pyproject.toml README.md config.example.toml ./
COPY memwal_mcp ./memwal_mcp
COPY migrations ./migrations
RUN pip install . \
    # link the bundled model's files now, so a read-only container needs no cache writes
    && python -c "from memwal_mcp.bundled_model import prepare_model_dir; prepare_model_dir()" \
    && useradd --system --home-dir /data memwal && mkdir -p /data && chown memwal /data

USER memwal
VOLUME /data
EXPOSE 8765
CMD ["memwal-mcp", "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8765"]
