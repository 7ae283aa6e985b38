// Ajv, for ToolRegistry to import lazily. A named import here lets the bundler do the CommonJS
// interop; a dynamic import of the package itself gets only its default export once bundled.
export { Ajv } from 'ajv';
