// Metering for capabilities' keys (docs/capabilities.md): usage records counted exactly once (their ids are
// their idempotency: no idempotency-key), and a metric's figures of the day. Reservations: reservations.ts.
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import {
  LimitParamsSchema,
  LimitTodaySchema,
  UsageAcceptedSchema,
  UsageBatchSchema,
} from '../../../plane/metering/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;
const _byId = { tags, headers: IdempotencyHeaders, params: IdParamsSchema };
const SCHEMAS = [UsageAcceptedSchema, LimitTodaySchema];

export const meteringRoutes = routes(SCHEMAS, (app) => {
  app.post(
    '/capability/v1/usage',
    {
      config: { ...config, idempotencyKey: false },
      schema: {
        operationId: 'recordUsage',
        summary: 'Record usage: 1–1,000 records, each counted once by its id (35 days), on its own UTC day',
        description:
          'A record repeated (in the batch or a later one) counts as a duplicate; the first wins. Any invalid record ' +
          '(an unknown project or metric included) refuses the whole batch. Recorded usage is never refused for a limit.',
        tags,
        body: UsageBatchSchema,
        response: { 200: ref('UsageAccepted'), ...errorResponses(400, 403, 413, 415) },
      },
    },
    async (request) => request.services.metering.record(capabilityOf(request), request.body.records),
  );

  app.get(
    '/capability/v1/limits/:projectId/:metric',
    {
      config,
      schema: {
        operationId: 'getLimitToday',
        summary:
          'A project’s metric today: its daily limit, what was used, what reservations hold, what remains',
        tags,
        params: LimitParamsSchema,
        response: { 200: ref('LimitToday'), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) =>
      request.services.metering.limit(capabilityOf(request), request.params.projectId, request.params.metric),
  );
});
