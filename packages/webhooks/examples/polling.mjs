// A consumer of a polling destination: it reads the feed from the cursor it keeps, with its project's key.
// A message came over the service's own API, so it needs no signature; its payload is the webhook payload.
// Run: PLATFORM_URL=http://localhost:8080 PLATFORM_API_KEY=pk_… DESTINATION_ID=… node polling.mjs
const base = `${process.env.PLATFORM_URL}/core/v1/destinations/${process.env.DESTINATION_ID}/messages`;
let cursor = ''; // keep it somewhere durable to resume after a restart
console.log(JSON.stringify({ consuming: process.env.DESTINATION_ID }));
for (;;) {
  const response = await fetch(`${base}?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
    headers: { 'x-api-key': process.env.PLATFORM_API_KEY },
  });
  if (!response.ok) throw new Error(`the feed answered ${response.status}`);
  const page = await response.json();
  for (const message of page.data)
    console.log(JSON.stringify({ verified: message.type, id: message.eventId }));
  cursor = page.nextCursor;
  if (page.data.length === 0) await new Promise((resolve) => setTimeout(resolve, 1000)); // caught up
}
