// Metering for capabilities' keys (docs/capabilities.md): usage records counted exactly once (their ids are
// their idempotency: no idempotency-key), reservations against a project's daily limit (reserve, commit,
// release), and a metric's figures of the day.
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import {
  CommitBodySchema,
  CommittedSchema,
  LimitParamsSchema,
  LimitTodaySchema,
  ReleasedSchema,
  ReservationBodySchema,
  ReservationSchema,
  UsageAcceptedSchema,
  UsageBatchSchema,
} from '../../../metering/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;
const byId = { tags, headers: IdempotencyHeaders, params: IdParamsSchema };
const SCHEMAS = [UsageAcceptedSchema, ReservationSchema, CommittedSchema, ReleasedSchema, LimitTodaySchema];

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

  app.post(
    '/capability/v1/reservations',
    {
      config,
      schema: {
        operationId: 'reserve',
        summary: 'Reserve part of a project’s daily allowance of a metric before costly work',
        description:
          'Past the limit: 429 USAGE_LIMIT_EXCEEDED with retry-after and RateLimit headers. Used + reserved never passes the limit.',
        tags,
        headers: IdempotencyHeaders,
        body: ReservationBodySchema,
        response: { 201: ref('Reservation'), ...errorResponses(400, 403, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return request.services.metering.reserve(capabilityOf(request), request.body);
    },
  );

  app.post(
    '/capability/v1/reservations/:id/commit',
    {
      config,
      schema: {
        ...byId,
        operationId: 'commitReservation',
        summary: 'Commit what was used: recorded under the reservation’s id; the rest freed',
        body: CommitBodySchema,
        response: { 200: ref('ReservationCommitted'), ...errorResponses(400, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) =>
      request.services.metering.commit(capabilityOf(request), request.params.id, request.body.amount),
  );

  app.post(
    '/capability/v1/reservations/:id/release',
    {
      config,
      schema: {
        ...byId,
        operationId: 'releaseReservation',
        summary: 'Release a reservation: what it held goes back to the day',
        response: { 200: ref('ReservationReleased'), ...errorResponses(400, 403, 404, 409, 422) },
      },
    },
    async (request) => request.services.metering.release(capabilityOf(request), request.params.id),
  );
});
