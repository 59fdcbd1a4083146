import { defineConfig } from "vitest/config";

// Django collects dist/ as the "frontend" static directory, so every URL the
// bundle emits must resolve under /static/frontend/ and the two entry files
// need stable names the templates can reference without a manifest.
export default defineConfig({
  base: "/static/frontend/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // With code splitting on, an IIFE build injects the CSS from JavaScript;
    // off, it is extracted into the one stylesheet the templates link.
    cssCodeSplit: false,
    // One bundle on purpose (an air-gapped product, no chunk loading); ECharts makes it ~0.9 MB.
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      input: "src/main.ts",
      output: {
        // A self-contained IIFE runs the same from <script defer> or <script type="module">.
        format: "iife",
        entryFileNames: "app.js",
        assetFileNames: (asset) =>
          asset.names.some((name) => name.endsWith(".css"))
            ? "app.css"
            : "assets/[name]-[hash][extname]",
      },
    },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
