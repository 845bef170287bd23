// Subscription patterns in SQL: which endpoints take an event of a type (an endpoint's eventTypes hold
// exact types, `prefix.*` and `*`; migration 0021's subscription_patterns gives the patterns a type
// matches). The queue's inserts and the catalogue's subscriber counts both use them.

/**
 * Endpoints `w` of project `project` that take events of type `type`: active, and subscribed (SQL). The
 * patterns that take the type are computed once a statement (a subquery), and each endpoint's list is
 * compared with them: no function call per endpoint (migration 0021).
 */
export const subscribed = (project: string, type: string) =>
  `w.project_id = ${project} and w.active and w.event_types && (select subscription_patterns(${type}::text))`;

/**
 * Endpoints `w` whose filter, if they have one, matches the event document `doc` (SQL: filterDocument's,
 * webhooks/filter.ts compiled the filter). Give the document as a subquery to have it built at most once
 * a statement, when first needed: a statement whose endpoints have no filter parses nothing.
 */
export const filtered = (doc: string) =>
  `(w.filter_path is null or jsonb_path_match(${doc}, w.filter_path, '{}', true))`;

/**
 * The document a filter is matched against: {type, data}, from the SQL of a type and of JSON text. jsonb
 * has no NUL: a \u0000 in the data reads as U+FFFD for the filter (the event is delivered as written).
 */
export const filterDocument = (type: string, data: string) =>
  `jsonb_build_object('type', ${type}::text, 'data', replace(${data}::text, '\\u0000', '\\ufffd')::jsonb)`;

/**
 * A lateral subquery (SQL) giving `patterns`, the patterns that take the type of each row before it, for
 * a statement whose type changes row by row (`&&` each endpoint's list with it). `offset 0` keeps the
 * planner from folding the call into the join's filter, where it ran once per type and endpoint, several
 * times slower on a large catalogue (docs/decisions/measured-choices.md).
 */
export const patternsOf = (type: string) =>
  `lateral (select subscription_patterns(${type}) as patterns offset 0)`;
