// snappyjs ships no types; the gateway uses its raw (unframed) block format, as remote write asks.
declare module "snappyjs" {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array): Uint8Array;
}
