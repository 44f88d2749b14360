// The diff view (diff2html and highlight.js, ≈90 kB gzip together) loads with the first
// diff opened, not with the window.
let diffView: Promise<typeof import("./DiffView.svelte")> | null = null;
export const loadDiffView = () => (diffView ??= import("./DiffView.svelte"));
