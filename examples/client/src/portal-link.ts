// A link for the project's developers to the portal (their endpoints, deliveries and usage): it opens
// once, within 10 minutes, and the session lasts an hour.
//   node src/portal-link.ts [LANGUAGE]
import { platform } from './platform.ts';

const language = process.argv[2];
const session = await platform.portalSessions.create({ ttlSeconds: 3600, ...(language && { language }) });
console.log(session.url);
