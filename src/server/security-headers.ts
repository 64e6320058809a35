import type { FastifyHelmetOptions } from '@fastify/helmet';

/**
 * The options of @fastify/helmet for every response. Scripts, styles and sockets come from this
 * server only, so nothing a model writes into an answer can load or run anything else.
 */
export const securityHeaders: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:', 'blob:'],
      // 'self' covers the page's own ws:// or wss:// origin.
      connectSrc: ["'self'"],
      // The web app manifest (public/manifest.webmanifest); default-src covers it, said here so it stays so.
      manifestSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  // Not sent even over Hearth's own HTTPS: a browser that has it can never reach this name over plain
  // HTTP again, so a lapsed certificate would lock the household out. A reverse proxy may add it.
  strictTransportSecurity: false,
};
