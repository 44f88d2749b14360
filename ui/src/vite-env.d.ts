/// <reference types="svelte" />
/// <reference types="vite/client" />

/** The workspace's version (Cargo.toml), the daemon's own: the hello carries it. */
declare const __WEFT_VERSION__: string;
