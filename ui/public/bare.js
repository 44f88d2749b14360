// The bare window's "interactive" mark, read the same way as the app's.
document.documentElement.dataset.readyAt = String(Date.now());
