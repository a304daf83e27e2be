/**
 * The API reference and health check, served alike by the local host (lib/local/host.ts) and, in the cloud, by the
 * reference function (functions/system/reference.ts, issue 42 item 12): `GET /health`, `GET /openapi.json` (the
 * document generated from the route table, lib/openapi.ts), `GET /docs` (Swagger UI over it) and the UI's files under
 * `/docs/assets/`. All public; the document and the page may be cached for five minutes, the UI's files for a day.
 */
export const HEALTH = { status: 'ok' } as const;

/** The server the bundled document names until the function serves it with the API's own URL (lib/reference-build.ts). */
export const DOCUMENT_SERVER = 'https://dispatch-api.invalid';

export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dispatch API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true, docExpansion: 'list' });</script>
</body></html>`;

/** The Swagger UI files the page loads (from swagger-ui-dist), by the name they are served under. */
export const DOCS_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'text/javascript',
};

export const CACHE = {
  health: 'no-store',
  reference: 'public, max-age=300',
  asset: 'public, max-age=86400',
} as const;
