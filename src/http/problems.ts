// The error model as the HTTP API documents it: the PlatformError schema of the OpenAPI document, the
// error responses of each route, and the page every problem's `type` points to.
import { Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorCode } from '../lib/errors.ts';
import { ERROR_GUIDE } from './error-guide.ts';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ enum: Object.keys(ERROR_CATALOGUE) }),
    requestId: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          pointer: Type.Optional(Type.String()),
          parameter: Type.Optional(Type.String()),
          detail: Type.String(),
        }),
      ),
    ),
    requiredScope: Type.Optional(Type.String()),
  },
  { $id: 'PlatformError', description: 'RFC 9457 problem details' },
);

/**
 * The error responses every authenticated route can give, plus its own, for the OpenAPI document: each an
 * `application/problem+json` PlatformError (the content type every problem is sent with).
 */
export function errorResponses(...statuses: number[]) {
  const problem = {
    description: 'a problem (RFC 9457): see its code',
    content: { 'application/problem+json': { schema: { $ref: 'PlatformError#' } } },
  };
  const responses: Record<number, unknown> = { 401: problem, 429: problem, 500: problem, 503: problem };
  for (const status of statuses) responses[status] = problem;
  return responses;
}

/** An HTML page explaining every code (its cause, what to do): the target of each problem's `type`. */
export function errorsPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(([code, { status, title }]) => {
      const { cause, fix } = ERROR_GUIDE[code as ErrorCode];
      return `<tr id="${code}"><td><code>${code}</code><br>${status}</td><td><strong>${title}</strong><p>${cause}</p><p><em>What to do:</em> ${fix}</p></td></tr>`;
    })
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>platform-core errors</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem}td,th{padding:.4rem .8rem;text-align:left;vertical-align:top;border-bottom:1px solid #ddd}td p{margin:.3rem 0}code{overflow-wrap:anywhere}:target{background:#fff3bf}</style>
</head><body><h1>Error codes</h1><p>Every error is an RFC 9457 problem (<code>application/problem+json</code>) with a stable <code>code</code> and the <code>requestId</code> to quote when reporting it. See also the <a href="/docs">API reference</a>.</p>
<table><thead><tr><th>code, status</th><th>meaning, cause, what to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}
