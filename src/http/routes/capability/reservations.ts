// A capability's reservations against a project's daily limit: made, committed with what was used, or
// released.
import { CAPABILITY_SCOPE } from '../../../keys/scopes.ts';
import {
  CommitBodySchema,
  CommittedSchema,
  ReleasedSchema,
  ReservationBodySchema,
  ReservationSchema,
} from '../../../plane/metering/schema.ts';
import { errorResponses } from '../../problems.ts';
import { IdempotencyHeaders, IdParamsSchema, ref, routes } from '../common.ts';
import { capabilityOf } from './plane.ts';

const tags = ['capability'];
const config = { access: CAPABILITY_SCOPE } as const;
const byId = { tags, headers: IdempotencyHeaders, params: IdParamsSchema };

export const reservationRoutes = routes([ReservationSchema, CommittedSchema, ReleasedSchema], (app) => {
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
