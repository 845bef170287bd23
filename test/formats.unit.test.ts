// The formats a tenant's schema may name are checked in time linear in the string: each one, on strings
// of 100,000 characters built to make backtracking engines explode, answers in a few milliseconds (the
// bound below is far from both: ajv-formats' own `url` took 17 s on the first of them), and each still
// tells a valid value from an invalid one. No database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Format } from 'ajv';
import { LINEAR_FORMATS } from '../src/catalogue/formats.ts';

const checkOf = (format: Format): ((value: string) => boolean) => {
  if (format === true) return () => true;
  if (typeof format === 'function') return format as (value: string) => boolean;
  if (format instanceof RegExp) return (value) => format.test(value);
  if (typeof format === 'object' && 'validate' in format) {
    const validate = format.validate;
    return (value) =>
      validate instanceof RegExp ? validate.test(value) : (validate as (v: string) => boolean)(value);
  }
  throw new Error('an unknown kind of format');
};

/** Strings that drive backtracking expressions into quadratic or exponential time. */
const HOSTILE = [
  `http://${':'.repeat(100_000)} `,
  `${'a'.repeat(100_000)}!`,
  `${'a.'.repeat(50_000)}@`,
  `a@${'a-'.repeat(50_000)}`,
  `P${'1Y'.repeat(50_000)}T`,
  `${'0:'.repeat(50_000)}x`,
  `/${'~0'.repeat(50_000)}~`,
  `${'1'.repeat(100_000)}-`,
  `2026-01-01T${'1'.repeat(100_000)}`,
];

describe('formats', () => {
  test('every format answers hostile strings of 100,000 characters in linear time', () => {
    for (const [name, format] of Object.entries(LINEAR_FORMATS)) {
      const check = checkOf(format);
      check('warm up');
      for (const value of HOSTILE) {
        const started = performance.now();
        check(value);
        const ms = performance.now() - started;
        assert.ok(ms < 250, `${name} took ${ms.toFixed(0)} ms on ${JSON.stringify(value.slice(0, 20))}…`);
      }
    }
  });

  test('valid values pass and invalid ones fail', () => {
    const cases: [string, string[], string[]][] = [
      [
        'date-time',
        ['2026-11-26T10:00:00Z', '2026-11-26t10:00:00.5+01:00'],
        ['2026-11-26', '2026-13-01T00:00:00Z'],
      ],
      ['duration', ['P1D', 'PT1H30M', 'P2W', 'P1Y2M3DT4H5M6S'], ['P', 'PT', 'P1DT', '1D']],
      ['uri', ['https://example.com/a?b#c', 'urn:isbn:123'], ['/relative', 'no scheme', 'http://a b']],
      ['url', ['https://example.com/x', 'ftp://files.example.com'], ['mailto:a@b.co', 'https://a b']],
      ['email', ['ada@example.com', 'a.b+c@d-e.example'], ['ada@', '@example.com', 'a b@c.d']],
      [
        'hostname',
        ['example.com', 'a-b.example.', 'localhost'],
        ['-a.com', `${'a'.repeat(64)}.com`, 'a_b.com'],
      ],
      ['ipv4', ['192.168.0.1'], ['256.0.0.1', '1.2.3']],
      ['ipv6', ['::1', '2001:db8::8a2e:370:7334'], ['2001:db8:::1', '12345::']],
      ['uuid', ['0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6'], ['0193b0a4-1e0b-7d4e-9f10']],
      ['json-pointer', ['', '/a/b~1c'], ['a/b', '/a~2']],
      ['byte', ['aGVsbG8=', ''], ['aGVsbG8', 'a=b=']],
      ['regex', ['^a+$'], ['(']],
    ];
    for (const [name, valid, invalid] of cases) {
      const check = checkOf(LINEAR_FORMATS[name] as Format);
      for (const value of valid) assert.equal(check(value), true, `${name}: ${value} is valid`);
      for (const value of invalid) assert.equal(check(value), false, `${name}: ${value} is not`);
    }
  });
});
