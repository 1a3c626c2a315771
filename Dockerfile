# syntax=docker/dockerfile:1
# One image for the four services and the saga console; the command picks what runs:
#   node services/<order|payment|inventory|shipment>/dist/server.js    run the service
#   node services/<order|payment|inventory|shipment>/dist/migrate.js   apply its migrations and exit
#   node services/console/dist/server.js                               run the saga console (CONSOLE_PORT, 3005)
# Build: `docker build -t saga/service .` (docs/deploy.md). Stages: prune (turbo prune: the four
# services, the console and the workspaces they import) -> build (all dependencies, prisma generate,
# tsc, the console's UI bundle) and deps (production dependencies only, no install scripts, no Prisma
# compilers for other databases) -> runtime (non-root, no sources, no dev tooling).
# packages/fleet/test/image.int.test.ts assembles the runtime stage's files with these same commands
# and boots the services and the console from them (no Docker engine needed).

# Exact tags (Node 24 LTS on Debian 12); a digest pin (@sha256:...) is the next step for a registry.
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

FROM ${NODE_IMAGE} AS prune
WORKDIR /repo
RUN npm install --global --ignore-scripts --no-audit --no-fund turbo@2.11.11
COPY . .
RUN turbo prune @saga/order-service @saga/payment-service @saga/inventory-service @saga/shipment-service @saga/console --docker --out-dir /out

FROM ${NODE_IMAGE} AS build
WORKDIR /repo
ENV CHECKPOINT_DISABLE=1 TURBO_TELEMETRY_DISABLED=1
# Manifests and lockfile first: this layer is reused until a dependency changes.
COPY --from=prune /out/json/ ./
# No install scripts: Prisma's would try to download engines; generate needs none (docs/deploy.md, "The image").
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --from=prune /out/full/ ./
COPY tsconfig.base.json ./
COPY infra/image/ infra/image/
# The console's build is its server (dist/server.js) and its UI, bundled into dist/public.
RUN npx turbo run build --filter=@saga/order-service --filter=@saga/payment-service --filter=@saga/inventory-service --filter=@saga/shipment-service --filter=@saga/console
RUN mkdir /runtime && cp package.json /runtime/ && sh infra/image/collect-runtime.sh /repo /runtime

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=prune /out/json/ ./
# --omit=optional as well: @prisma/client's optional peers (prisma CLI, typescript) are in the lockfile
# for development, and --omit=dev alone keeps such devOptional trees (~130 packages, Studio, PGlite).
# The one optional runtime dependency it drops is pg-cloudflare (Cloudflare Workers only).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund
# Before the runtime stage copies node_modules: a file deleted in a later layer would stay in the image.
COPY infra/image/prune-prisma-engines.sh ./
RUN sh prune-prisma-engines.sh node_modules

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /runtime ./
# The base image's unprivileged user (uid 1000); the files stay root's, read-only to the process.
USER node
EXPOSE 3001 3002 3003 3004 3005
# server.js handles SIGTERM (close-with-grace): stop consuming, drain, close pools.
CMD ["node", "-e", "console.error('choose a command: node services/<service>/dist/server.js or .../migrate.js, or node services/console/dist/server.js'); process.exit(64)"]
