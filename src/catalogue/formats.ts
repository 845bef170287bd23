// The `format`s a project's schema may name, each checked in time linear in the string: a tenant's data
// and a tenant's schema meet here, and a backtracking expression (ajv-formats' `url` took seconds on
// 40,000 characters) would stall every project. Regular expressions run on RE2; the formats whose usual
// expressions need lookaround (duration, hostname, url, uri) say the same thing without it; dates, times
// and numbers keep ajv-formats' own checks (anchored expressions that never backtrack more than a step).
// test/formats.test.ts times each on hostile strings.
import type { Format } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { RE2JS } from 're2js';

type Check = (value: string) => boolean;

const re2 = (pattern: RegExp | string, caseInsensitive = false): Check => {
  const source = typeof pattern === 'string' ? pattern : pattern.source;
  const compiled = RE2JS.compile(source, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  return (value) => compiled.test(value);
};

/** RFC 3986 URI-reference (ajv-formats' expression, which RE2 runs as written). */
const uriReference = re2(fullFormats['uri-reference'] as RegExp, true);
const SCHEME = re2('^[a-z][a-z0-9+.-]*:', true);
const WEB_SCHEME = re2('^(?:https?|ftp)://', true);

/** A URI is a URI-reference with a scheme: a relative reference's first segment cannot hold a colon. */
const uri: Check = (value) => SCHEME(value) && uriReference(value);

const DURATION = re2(
  '^P(?:[0-9]+W|(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+S)?)?)$',
);
/** ISO 8601 durations (RFC 3339, appendix A): at least one part, and a T only before a time part. */
const duration: Check = (value) => value.length > 1 && !value.endsWith('T') && DURATION(value);

const LABELS = re2(
  '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\\.?$',
  true,
);
/** RFC 1123 host names: labels of at most 63 characters, 253 in all (a final dot not counted). */
const hostname: Check = (value) => {
  const length = value.endsWith('.') ? value.length - 1 : value.length;
  return length >= 1 && length <= 253 && LABELS(value);
};

const ownRegex = (name: string) => re2(fullFormats[name as keyof typeof fullFormats] as RegExp, true);

export const LINEAR_FORMATS: Record<string, Format> = {
  date: fullFormats.date,
  time: fullFormats.time,
  'date-time': fullFormats['date-time'],
  'iso-time': fullFormats['iso-time'],
  'iso-date-time': fullFormats['iso-date-time'],
  duration,
  uri,
  'uri-reference': uriReference,
  'uri-template': ownRegex('uri-template'),
  /** ajv-formats' `url` kept web schemes and refused private addresses; here: a web URI */
  url: (value) => WEB_SCHEME(value) && uriReference(value),
  email: ownRegex('email'),
  hostname,
  ipv4: ownRegex('ipv4'),
  ipv6: ownRegex('ipv6'),
  /** an ECMAScript expression: compiled, never run */
  regex: fullFormats.regex,
  uuid: ownRegex('uuid'),
  'json-pointer': re2(fullFormats['json-pointer'] as RegExp),
  'json-pointer-uri-fragment': ownRegex('json-pointer-uri-fragment'),
  'relative-json-pointer': re2(fullFormats['relative-json-pointer'] as RegExp),
  byte: re2('^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'),
  int32: fullFormats.int32,
  int64: fullFormats.int64,
  float: fullFormats.float,
  double: fullFormats.double,
  password: true,
  binary: true,
};
