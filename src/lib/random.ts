// Random bytes for ids, secrets and IVs, from a pool of the system's generator.
import { randomBytes } from 'node:crypto';

const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * Random bytes taken from a pool of the system's generator, drawn 4 KiB at a time. A draw costs the same
 * whatever its size (OpenSSL's checks, a getpid among them), a slice of the pool a thirtieth of it
 * (docs/decisions/measured-choices.md), and a create draws three times (its secret, two IVs), a publish
 * twice (its event's id, its answer's IV).
 * As Node's randomUUID does: each byte goes out once, and is wiped from the pool as it goes.
 */
export function randomPooled(size: number): Buffer {
  if (size > POOL_SIZE) return randomBytes(size);
  if (poolOffset + size > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + size)); // a copy
  pool.fill(0, poolOffset, poolOffset + size);
  poolOffset += size;
  return bytes;
}
