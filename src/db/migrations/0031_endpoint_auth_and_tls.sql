-- What a receiver can ask for (contract 0.4), continued: OAuth 2.0 client credentials and a client
-- certificate for mutual TLS. What the answers show is kept in clear (`auth` without its secret, the
-- certificate); the client secret and the private key are sealed (AES-256-GCM, bound to the endpoint).
alter table webhook_endpoints
  add column auth jsonb,
  add column auth_secret_sealed bytea,
  add column tls_certificate text,
  add column tls_key_sealed bytea,
  add constraint webhook_endpoints_auth_whole check ((auth is null) = (auth_secret_sealed is null)),
  add constraint webhook_endpoints_tls_whole check ((tls_certificate is null) = (tls_key_sealed is null));
