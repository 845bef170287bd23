// OAuth 2.0 client credentials (RFC 6749 4.4) for endpoints that ask for a bearer token: fetched from the
// endpoint's token URL through the same guarded agent as deliveries (the address policy holds for it too),
// kept until 60 s before it expires, fetched once for all the sends that need it at the same time, and
// fetched again when a receiver answers 401 to it.
import { type Dispatcher, request } from 'undici';

export interface OAuthClient {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  audience?: string;
}

/** Why a token could not be had: said in the attempt's lastError. */
export class TokenError extends Error {}

/** A token's life is cut by this much, so that it is never sent as it expires. */
const EARLY_MS = 60_000;
/** A token whose answer gives no expires_in is kept this long. */
const DEFAULT_LIFE_MS = 300_000;
const MAX_TOKENS = 10_000;

interface Held {
  client: OAuthClient;
  token: string;
  until: number;
}

export class OAuthTokens {
  readonly #agent: Dispatcher;
  readonly #timeoutMs: number;
  readonly #held = new Map<string, Held>();
  readonly #fetching = new Map<string, Promise<string>>();

  constructor(agent: Dispatcher, timeoutMs: number) {
    this.#agent = agent;
    this.#timeoutMs = timeoutMs;
  }

  /** The endpoint's token: the one held while it is good and for the same client, else a new one. */
  token(endpointId: string, client: OAuthClient, renew = false): Promise<string> {
    const held = this.#held.get(endpointId);
    if (!renew && held && held.until > Date.now() && same(held.client, client))
      return Promise.resolve(held.token);
    const under = this.#fetching.get(endpointId);
    if (under) return under;
    const fetching = this.#fetch(client)
      .then(({ token, lifeMs }) => {
        if (this.#held.size >= MAX_TOKENS) this.#held.clear();
        // Kept to 60 s before it expires; a token that lives less than two minutes, half its life.
        const keep = lifeMs > 2 * EARLY_MS ? lifeMs - EARLY_MS : lifeMs / 2;
        this.#held.set(endpointId, { client, token, until: Date.now() + keep });
        return token;
      })
      .finally(() => this.#fetching.delete(endpointId));
    this.#fetching.set(endpointId, fetching);
    return fetching;
  }

  async #fetch(client: OAuthClient): Promise<{ token: string; lifeMs: number }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (client.scope) form.set('scope', client.scope);
    if (client.audience) form.set('audience', client.audience);
    const basic = Buffer.from(
      `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`,
    ).toString('base64');
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(client.tokenUrl, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        maxRedirections: 0,
      } as Parameters<typeof request>[1]);
    } catch (error) {
      throw new TokenError(`OAuth token endpoint unreachable: ${(error as Error).message}`.slice(0, 300));
    }
    const text = (await answer.body.text()).slice(0, 16_384);
    if (answer.statusCode !== 200) {
      throw new TokenError(`OAuth token endpoint answered ${answer.statusCode}: ${text.slice(0, 200)}`);
    }
    let parsed: { access_token?: unknown; expires_in?: unknown };
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new TokenError('OAuth token endpoint answered something other than JSON');
    }
    if (typeof parsed.access_token !== 'string' || parsed.access_token === '')
      throw new TokenError('OAuth token endpoint answered no access_token');
    const seconds = Number(parsed.expires_in);
    const lifeMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_LIFE_MS;
    return { token: parsed.access_token, lifeMs };
  }
}

const same = (a: OAuthClient, b: OAuthClient) =>
  a.tokenUrl === b.tokenUrl &&
  a.clientId === b.clientId &&
  a.clientSecret === b.clientSecret &&
  a.scope === b.scope &&
  a.audience === b.audience;
