-- What an attempt sent beyond the Standard Webhooks headers (contract 0.4: the delivery log shows each
-- attempt's request headers as sent, values redacted): the names of the endpoint's own headers, and
-- `authorization` when it carried an OAuth token, comma-separated; null when it sent none (most attempts,
-- which then cost nothing more). The rest of the request's headers follow from the attempt itself.
alter table delivery_attempts add column sent_headers text;
