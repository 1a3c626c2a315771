import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// The UI is bundled into the console's dist/ui, which the server serves (no CDN, nothing fetched at run time).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/ui', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1_000,
  },
  server: {
    // `npx vite --config src/ui/vite.config.ts` against a running console (CONSOLE_PORT 3005).
    proxy: { '/api': 'http://127.0.0.1:3005' },
  },
})
