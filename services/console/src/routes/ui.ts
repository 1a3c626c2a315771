import { existsSync } from 'node:fs'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'

/** Options of `uiRoutes`. */
export interface UiRoutesOptions {
  /** The built UI (vite's output: index.html and assets/). */
  root: string
}

/**
 * What the pages may load: only the console's own scripts, styles and data (the UI is bundled; no
 * CDN), inline style attributes (the graph and chart libraries set them), and no framing (the
 * action buttons must not be clickjacked).
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/** The pages of the single-page app; each answers index.html and the app routes in the browser. */
export const PAGES = ['/', '/orders', '/orders/:id', '/repair'] as const

/**
 * The built UI: the files under `root` (hashed assets cached for a year, index.html never), and
 * index.html for each page of the app (`PAGES`), so a reload or a shared link of `/orders/<id>`
 * opens that page; 503 naming the fix while the UI is not built. Unknown paths keep the app's 404.
 */
export const uiRoutes: FastifyPluginAsync<UiRoutesOptions> = async (app, { root }) => {
  const built = existsSync(join(root, 'index.html'))
  if (!built) app.log.warn({ root }, 'the console UI is not built (npm run build): pages answer 503')
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: false,
    // A route per built file (read at start): no catch-all, so unknown paths keep the app's 404.
    wildcard: false,
    setHeaders(reply, path) {
      void reply
        .header('x-content-type-options', 'nosniff')
        .header(
          'cache-control',
          path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        )
    },
  })
  for (const page of PAGES) {
    app.get(page, { schema: { hide: true } }, (request, reply) =>
      !built
        ? reply.code(503).send({
            error: 'Service Unavailable',
            message: 'The console UI is not built; run npm run build',
            requestId: request.id,
          })
        : reply
            .header('content-security-policy', CONTENT_SECURITY_POLICY)
            .header('x-frame-options', 'DENY')
            .header('cache-control', 'no-cache')
            .sendFile('index.html'),
    )
  }
}
