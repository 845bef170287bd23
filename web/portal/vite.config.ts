// The portal's build: hashed assets under /portal/assets/ (cached for a year by the service), nothing
// inlined, so the page runs under a CSP without 'unsafe-inline' and loads nothing from another host.
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/portal/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
