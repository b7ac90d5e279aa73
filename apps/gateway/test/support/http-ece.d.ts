// http_ece ships no types; the push stand-in uses only decrypt (RFC 8188 / RFC 8291).
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  export function decrypt(
    buffer: Buffer,
    params: { version: "aes128gcm"; privateKey: ECDH; authSecret: Buffer },
  ): Buffer;
}
