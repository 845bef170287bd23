-- A polling destination's feed keeps each message as the JSON entry its page answers, written once when it
-- is appended: a page is then its entries joined, and a read neither makes an object of a row nor writes
-- a date again (read as rows and written out again, a page of 1,000 cost the API about four times the
-- read itself). The payload stays byte for byte inside the entry.
alter table destination_messages add column entry text;
update destination_messages
   set entry = '{"eventId":"' || event_id || '","type":' || to_json(event_type)::text
               || ',"timestamp":"' || to_char(event_created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
               || '","payload":' || payload || '}';
alter table destination_messages alter column entry set not null, drop column payload;
