/** FNV-1a, 32 bits: a stable, well-spread hash for seeded ordering (not for security). */
export function seededHash(seed: string, value: string): number {
  let hash = 0x811c9dc5;
  const text = `${seed}\u0000${value}`;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  // A final avalanche (murmur3's fmix32) so that ids differing in their last character spread.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
