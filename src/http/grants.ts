// What an operator grants a capability beyond its own routes (contract 0.4): a route that reads across
// projects checks the grant after the key, from the registry (which every process reads again before an
// operator's change is answered: settings/lease.ts). Without it, 403 naming the grant and who gives it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError } from '../lib/errors.ts';
import type { Grant } from '../plane/capabilities/service.ts';
import type { CapabilityRegistry } from '../registry.ts';
import { principalOf } from './auth.ts';

export function requireGrant(registry: CapabilityRegistry, grant: Grant) {
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const capability = principalOf(request).capability as string;
    if (registry.get(capability)?.grants?.includes(grant)) return done();
    const detail = `the capability ${capability} is not granted ${grant}; an operator grants it with \`platform capabilities update ${capability} --grants ${grant}\``;
    done(new PlatformError('INSUFFICIENT_SCOPE', detail, { requiredScope: grant }));
  };
}
