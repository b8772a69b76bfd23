// Global setup placeholder; the PostgreSQL setup (real server or embedded PGlite) lands with the delivery engine.
export default function setup(): void {}
