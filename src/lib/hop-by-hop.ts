// The hop-by-hop headers of HTTP (RFC 9110 7.6.1, with the older proxy-connection and trailers): they
// belong to one connection, so a proxy never forwards them and a request's sender never takes them from
// a tenant. The gateway strips them both ways; an endpoint's own headers may not name them.
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);
