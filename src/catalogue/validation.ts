// A tenant's JSON checked against a tenant's schema, as PlatformErrors: the schema's bounds on the loop
// (bounds.ts), everything else on a validation thread within its budgets (validation-thread.ts). Two
// threads: publishes are checked on the shared one; declarations compile on a quarantine thread, and so
// does every check of a schema that proved costly (slow to compile, or a check over its budget), so that
// one tenant's costly schema delays its own events, not every project's.
import { LRUCache } from 'lru-cache';
import { type FieldError, PlatformError } from '../lib/errors.ts';
import { checkSchemaBounds } from './bounds.ts';
import {
  COMPILE_BUDGET_MS,
  type Outcome,
  VALIDATE_BUDGET_MS,
  ValidationThread,
} from './validation-thread.ts';

const refused = (detail: string, errors: FieldError[]) =>
  new PlatformError('VALIDATION_FAILED', detail, { errors });

export class TenantSchemas {
  /** the texts of schemas that proved costly on the shared thread; checked in quarantine since */
  readonly #costly = new LRUCache<string, true>({ max: 10_000 });
  readonly #shared = new ValidationThread({ onCostly: (schema) => this.#costly.set(schema, true) });
  readonly #quarantine = new ValidationThread();

  /** A declared schema within its bounds and compiled: its text; else a 400 pointing at `pointer`. */
  async declare(schema: object, pointer = '/schema'): Promise<string> {
    checkSchemaBounds(schema, pointer);
    const text = JSON.stringify(schema);
    const outcome = await this.#quarantine.compile(text);
    if ('overBudget' in outcome) {
      const detail = `compiling the schema took over ${COMPILE_BUDGET_MS / 1000} s, the limit: simplify it or split it`;
      throw refused(detail, [{ pointer, detail }]);
    }
    const [problem] = outcome.problems ?? [];
    if (problem) throw refused(problem.detail, [{ pointer, detail: problem.detail }]);
    return text;
  }

  /**
   * Checks a document (JSON text) against a schema (JSON text), `what` being the document for the error
   * (`the data`); else a 400 with a pointer under `at` for each problem. `declaring`: an example, checked
   * where its schema compiled.
   */
  async check(schema: string, document: string, at: string, what: string, declaring = false) {
    const thread = declaring || this.#costly.has(schema) ? this.#quarantine : this.#shared;
    requireValid(await thread.validate(schema, document, at), at, what);
  }

  async close() {
    await Promise.all([this.#shared.close(), this.#quarantine.close()]);
  }
}

function requireValid(outcome: Outcome, at: string, what: string) {
  if ('overBudget' in outcome) {
    const budget =
      outcome.overBudget === 'compile' ? `${COMPILE_BUDGET_MS / 1000} s` : `${VALIDATE_BUDGET_MS} ms`;
    const detail = `checking ${what} against its event type's schema took over ${budget}, the limit`;
    throw refused(detail, [{ pointer: at, detail }]);
  }
  if (outcome.problems) {
    throw refused(`${what} does not match its event type's schema`, outcome.problems);
  }
}
