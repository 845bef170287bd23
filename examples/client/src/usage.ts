// Today's usage of the project against its daily limits.
//   node src/usage.ts
import { platform } from './platform.ts';

const today = new Date().toISOString().slice(0, 10);
const usage = await platform.usage.get({ from: today, to: today });
for (const limit of usage.limits) {
  const used = usage.data.find((row) => row.capability === limit.capability && row.metric === limit.metric);
  console.log(`${limit.capability}/${limit.metric}: ${used?.count ?? 0} of ${limit.dailyLimit} today`);
}
