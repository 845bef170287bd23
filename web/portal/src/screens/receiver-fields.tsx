// An endpoint's fields in the create and settings forms: its URL, what the receiver is called, and the
// headers sent with every delivery; and where the API's refusal of each is said. Header values are write-only: the settings form shows each header's
// name only, and a line sets, replaces or (with nothing after its colon) removes one.
import { ApiError, type Endpoint } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { useLocale } from '../i18n/index.ts';

/** The headers' lines (`name: value`) as a merge patch: names in lower case, an empty value removes. */
export function parseHeaderLines(text: string): Record<string, string | null> | undefined {
  const headers: Record<string, string | null> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const value = line.slice(colon + 1).trim();
    headers[line.slice(0, colon).trim().toLowerCase()] = value === '' ? null : value;
  }
  return headers;
}

/** The filter's text as JSON: null when empty, undefined when it is not JSON. */
function parseFilter(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The form's name, description, filter and header lines, as the body members they stand for. */
export function receiverBody(form: FormData, creating: boolean) {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const headers = parseHeaderLines(String(form.get('headers') ?? ''));
  const filter = parseFilter(text('filter'));
  const body: Record<string, unknown> = {
    name: text('name') || null,
    description: text('description') || null,
  };
  if (filter === undefined) return { body, headersInvalid: false, filterInvalid: true };
  if (filter !== null || !creating) body.filter = filter;
  if (headers === undefined) return { body, headersInvalid: true, filterInvalid: false };
  const set = creating
    ? Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== null))
    : headers;
  if (Object.keys(set).length > 0) body.headers = set;
  return { body, headersInvalid: false, filterInvalid: false };
}

/**
 * Where each of the receiver's fields is refused: the form's own checks (header lines, JSON) first, then
 * the API's by pointer; `any` when one is, so the form says nothing more below.
 */
export function receiverErrors(
  t: (key: MessageKey) => string,
  failure: unknown,
  own: { linesInvalid: boolean; notJson: boolean },
) {
  const errors = {
    headersError: own.linesInvalid ? t('receiver.headersLines') : fieldError(failure, '/headers'),
    nameError: fieldError(failure, '/name'),
    filterError: own.notJson ? t('receiver.filterJson') : fieldError(failure, '/filter'),
    authError: fieldError(failure, '/auth'),
    tlsError: fieldError(failure, '/tls'),
  };
  return { ...errors, any: Object.values(errors).some(Boolean) };
}

export function ReceiverFields(props: {
  endpoint?: Endpoint;
  /** the error beside the headers: the API's, or the lines' own */
  headersError?: string;
  nameError?: string;
  filterError?: string;
}) {
  const { t } = useLocale();
  const { endpoint, headersError, nameError, filterError } = props;
  const names = Object.keys(endpoint?.headers ?? {});
  const prefix = endpoint ? 'endpoint-' : '';
  return (
    <>
      <label for={`${prefix}name`}>{t('receiver.name')}</label>
      <input
        id={`${prefix}name`}
        name="name"
        maxLength={100}
        defaultValue={endpoint?.name ?? ''}
        aria-invalid={nameError ? 'true' : undefined}
      />
      {nameError && <p class="field-error">{nameError}</p>}
      <label for={`${prefix}description`}>{t('receiver.description')}</label>
      <textarea
        id={`${prefix}description`}
        name="description"
        rows={2}
        maxLength={1000}
        defaultValue={endpoint?.description ?? ''}
      />
      <label for={`${prefix}headers`}>{t('receiver.headers')}</label>
      <textarea
        id={`${prefix}headers`}
        name="headers"
        rows={2}
        spellcheck={false}
        placeholder="x-tenant: acme"
        aria-describedby={`${prefix}headers-hint${headersError ? ` ${prefix}headers-error` : ''}`}
        aria-invalid={headersError ? 'true' : undefined}
      />
      <p id={`${prefix}headers-hint`} class="hint">
        {endpoint ? t('receiver.headersChange') : t('receiver.headersHint')}
        {names.length > 0 && ` ${t('receiver.headersSet', { names: names.join(', ') })}`}
      </p>
      {headersError && (
        <p id={`${prefix}headers-error`} class="field-error">
          {headersError}
        </p>
      )}
      <label for={`${prefix}filter`}>{t('receiver.filter')}</label>
      <textarea
        id={`${prefix}filter`}
        name="filter"
        rows={3}
        spellcheck={false}
        placeholder='{"data": {"amount": [{"numeric": [">", 100]}]}}'
        defaultValue={endpoint?.filter ? JSON.stringify(endpoint.filter, null, 2) : ''}
        aria-describedby={`${prefix}filter-hint${filterError ? ` ${prefix}filter-error` : ''}`}
        aria-invalid={filterError ? 'true' : undefined}
      />
      <p id={`${prefix}filter-hint`} class="hint">
        {t('receiver.filterHint')}
      </p>
      {filterError && (
        <p id={`${prefix}filter-error`} class="field-error">
          {filterError}
        </p>
      )}
    </>
  );
}

/** An endpoint's URL: its label, its hint when given, and the API's refusal of it beside it. */
export function UrlField(props: { id: string; error?: string; hint?: string; defaultValue?: string }) {
  const { t } = useLocale();
  return <TextField {...props} label={t('create.url')} name="url" type="url" required />;
}

/** A field with its label, its hint when given, and what is wrong with it beside it. */
export function TextField(props: {
  id: string;
  label: string;
  name: string;
  type: 'text' | 'url' | 'number';
  required: boolean;
  error?: string;
  hint?: string;
  defaultValue?: string;
}) {
  const { id, label, name, type, required, error, hint, defaultValue } = props;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        required={required}
        defaultValue={defaultValue}
        autocomplete={type === 'url' ? undefined : 'off'}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      )}
    </>
  );
}

/** Which member of the body a 400 names, by JSON pointer. */
export const fieldError = (failure: unknown, pointer: string) =>
  failure instanceof ApiError
    ? failure.problem.errors?.find((e) => e.pointer?.startsWith(pointer))?.detail
    : undefined;
