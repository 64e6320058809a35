/** Hearth's version, as GET /health answers it and MCP servers are told at initialize. */
export const version = '0.1.0';
