// The part of this package that needs no session and runs no process: its errors, and reading
// and selecting the hunks of a diff. The tools and the review import it through the subpath
// `@infinity-code/sandbox/patches`, so that loading them does not load the sandboxes (a headless
// run sends its first model request before it opens any).
export { SandboxError, SandboxPathError, UnsafeChangeError, type SandboxErrorCode } from './errors.js';
export { changedSinceReview, patchFiles, selectHunks, type PatchFile, type PatchFileStatus, type PatchHunk } from './hunks.js';
