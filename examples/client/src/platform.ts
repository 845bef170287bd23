// The client every script uses: the project's key and the service's address from the environment.
import { PlatformClient } from '@platform-core/client';

const apiKey = process.env.PLATFORM_API_KEY;
if (!apiKey) {
  console.error('set PLATFORM_API_KEY to a key of your project (npm run dev prints one)');
  process.exit(2);
}

export const platform = new PlatformClient({
  apiKey,
  baseUrl: process.env.PLATFORM_URL ?? 'http://127.0.0.1:8080',
});

/** The script's arguments, or its usage and exit code 2. */
export function args(usage: string, count: number): string[] {
  const given = process.argv.slice(2);
  if (given.length < count) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return given;
}
