import { defineConfig } from "vite";
export default defineConfig({
  base: "/console/",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, target: "es2022" },
});
