// Erases a person from every capability of the project, then reads the erasure's record: each
// capability's state, and how many records it erased (one still answering is asked again for 7 days).
//   node src/erase.ts EMAIL
import { args, platform } from './platform.ts';

const [email = ''] = args('erase.ts EMAIL', 1);
const { erasureId } = await platform.subjects.erase({ subject: { type: 'email', value: email } });
const erasure = await platform.subjects.erasure(erasureId);
console.log(`erasure ${erasure.id}: ${erasure.state}`);
for (const { capability, state, erased } of erasure.capabilities)
  console.log(`  ${capability}: ${state}${erased === null ? '' : `, ${erased} erased`}`);
