// Styles are bundled by esbuild from imports.
declare module '*.css';
