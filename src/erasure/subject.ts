// Subjects (the people erasure is about): validation, normalization, and their keyed hash.
// The hash is HMAC-SHA256 under a per-installation pepper kept sealed in the database, so neither event
// tags nor the audit hold an identifier in clear, and a leaked table cannot be matched against a list of
// e-mail addresses without the master key.
import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { type Keyring, seal, unseal } from '../lib/crypto.ts';
import { PlatformError } from '../lib/errors.ts';
import { SUBJECT_TYPES, type Subject } from '../registry.ts';

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/u;
const E164 = /^\+[1-9][0-9]{1,14}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The subject in its canonical form: e-mail lower-cased (compared case-insensitively), phone E.164. */
export function normalizeSubject(subject: { type: string; value: string }): Subject {
  const refuse = (detail: string) =>
    new PlatformError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/subject/value', detail }] });
  const value = subject.value.normalize('NFC');
  switch (subject.type) {
    case 'email': {
      const email = value.trim().toLowerCase();
      if (email.length > 254 || !EMAIL.test(email))
        throw refuse('an email subject must be an e-mail address');
      return { type: 'email', value: email };
    }
    case 'phone':
      if (!E164.test(value)) throw refuse('a phone subject must be in E.164 form, such as +14155550100');
      return { type: 'phone', value };
    case 'external_id':
      if (value.length === 0 || value.length > 255 || CONTROL.test(value)) {
        throw refuse('an external_id subject must be 1-255 characters without control characters');
      }
      return { type: 'external_id', value };
  }
  throw new PlatformError('VALIDATION_FAILED', `subject.type must be one of ${SUBJECT_TYPES.join(', ')}`, {
    errors: [{ pointer: '/subject/type', detail: `must be one of ${SUBJECT_TYPES.join(', ')}` }],
  });
}

const PEPPER = 'subject-hmac-pepper';

/** hash(subject) under the installation's pepper, made (and sealed) on first use. */
export function subjectHasher(db: Db, keyring: Keyring) {
  let pepper: Promise<Buffer> | undefined;
  const load = async () => {
    const fresh = seal(keyring, randomBytes(32), PEPPER);
    await db.query(
      `insert into instance_secrets (name, sealed) values ($1, $2) on conflict (name) do nothing`,
      [PEPPER, fresh],
    );
    const { rows } = await db.query<{ sealed: Buffer }>(
      `select sealed from instance_secrets where name = $1`,
      [PEPPER],
    );
    const sealed = rows[0]?.sealed;
    if (!sealed) throw new Error('the subject pepper could not be stored');
    return unseal(keyring, sealed, PEPPER);
  };
  const ready = () => {
    pepper ??= load().catch((error) => {
      pepper = undefined; // try again next time
      throw error;
    });
    return pepper;
  };
  const hash = async (subject: Subject): Promise<Buffer> =>
    createHmac('sha256', await ready())
      .update(`${subject.type}:${subject.value}`)
      .digest();
  // Loaded ahead of use, outside any transaction: loading it lazily from inside one would take a second
  // pool connection while holding the first.
  return Object.assign(hash, { ready });
}

export type SubjectHasher = ReturnType<typeof subjectHasher>;
