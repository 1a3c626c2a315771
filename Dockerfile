# syntax=docker/dockerfile:1
# One image recipe for the four services: `docker build --build-arg SERVICE=order --target service .`
# Built the way CI and `npm start` build: npm ci, prisma generate (inside turbo's build), tsc.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /repo
# Manifests first, so the dependency layer is reused until a package.json or the lockfile changes.
COPY package.json package-lock.json ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/fleet/package.json packages/fleet/
COPY packages/load/package.json packages/load/
COPY packages/messaging/package.json packages/messaging/
COPY packages/service-kit/package.json packages/service-kit/
COPY packages/testkit/package.json packages/testkit/
COPY services/order/package.json services/order/
COPY services/payment/package.json services/payment/
COPY services/inventory/package.json services/inventory/
COPY services/shipment/package.json services/shipment/
COPY e2e/package.json e2e/
RUN npm ci --no-audit --no-fund

FROM deps AS build
ARG SERVICE
RUN test -n "$SERVICE" || (echo "build with --build-arg SERVICE=order|payment|inventory|shipment" >&2; exit 1)
COPY tsconfig.base.json turbo.json ./
COPY packages packages
COPY services services
# The generate script defaults PRISMA_SCHEMA_ENGINE_BINARY to /bin/true: `prisma generate` needs no
# schema engine, and the image never runs `prisma migrate` (the service applies its own migrations).
ENV CHECKPOINT_DISABLE=1 TURBO_TELEMETRY_DISABLED=1
RUN npx turbo run build --filter=@saga/${SERVICE}-service \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS service
ARG SERVICE
ENV NODE_ENV=production
WORKDIR /repo
COPY --from=build /repo/package.json ./
COPY --from=build /repo/node_modules node_modules
# Workspace packages are symlinked from node_modules/@saga; the service needs their dist and manifests.
COPY --from=build /repo/packages packages
COPY --from=build /repo/services/${SERVICE}/package.json services/${SERVICE}/
COPY --from=build /repo/services/${SERVICE}/dist services/${SERVICE}/dist
COPY --from=build /repo/services/${SERVICE}/prisma services/${SERVICE}/prisma
WORKDIR /repo/services/${SERVICE}
USER node
EXPOSE 3001 3002 3003 3004
# server.ts handles SIGTERM (close-with-grace): stop consuming, drain, close pools.
CMD ["node", "dist/server.js"]
