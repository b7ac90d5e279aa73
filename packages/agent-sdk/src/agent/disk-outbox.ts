import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readdir, readFile, rename, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { DURABLE_UP_TYPES, type DurableUpType } from "../protocol/index.js";
import type { Outbox, OutboxRecord, OutboxStats } from "./outbox.js";
import { SerialQueue } from "./outbox.js";

/**
 * Record layout (little endian): u32 body length, u32 CRC-32 of the body, body =
 * f64 index, u8 type, f64 key, payload. The CRC finds a record torn by a crash mid-write; such a
 * tail is cut off when the outbox is reopened.
 */
const HEADER_BYTES = 8;
const BODY_FIXED_BYTES = 17;
const SEGMENT_SUFFIX = ".seg";
const CURSOR_FILE = "cursor";

export interface DiskOutboxOptions {
  dir: string;
  /** Cap on all segment files together; past it, the oldest metrics go first. */
  maxBytes: number;
  /** A segment is closed for appends past this size (small segments make eviction cheap). */
  segmentBytes?: number;
  /** fdatasync after every append (default true): a report survives a power cut once appended. */
  sync?: boolean;
  onEvict?: (count: number, type: DurableUpType | "mixed") => void;
}

interface Segment {
  path: string;
  /** Index of every record in the file, ascending (8 bytes each: cheap next to the payloads). */
  indexes: number[];
  bytes: number;
  metrics: number;
}

function lastIndexOf(segment: Segment): number {
  return segment.indexes.at(-1) ?? -1;
}

/**
 * Append-only segment files under the agent's state dir plus a cursor file naming the first
 * undelivered index. Only segment metadata stays in memory, so a full buffer costs little RSS.
 */
export class DiskOutbox implements Outbox {
  private segments: Segment[] = [];
  private active: FileHandle | undefined;
  private nextIndex = 0;
  private cursor = 0;
  private evicted = 0;
  private readonly queue = new SerialQueue();
  private readonly segmentBytes: number;
  private readonly sync: boolean;

  private constructor(private readonly options: DiskOutboxOptions) {
    this.segmentBytes = options.segmentBytes ?? 64 * 1024;
    this.sync = options.sync ?? true;
    if (options.maxBytes < 4 * this.segmentBytes) {
      throw new Error(
        `outbox maxBytes ${options.maxBytes} is below 4 segments (${4 * this.segmentBytes} bytes)`,
      );
    }
  }

  static async open(options: DiskOutboxOptions): Promise<DiskOutbox> {
    const outbox = new DiskOutbox(options);
    await outbox.load();
    return outbox;
  }

  append(type: DurableUpType, key: number, payload: Uint8Array): Promise<void> {
    return this.queue.run(async () => {
      const index = this.nextIndex++;
      const record = encodeRecord({ index, type, key, payload });
      let segment = this.segments.at(-1);
      if (!segment || !this.active || segment.bytes >= this.segmentBytes) {
        await this.active?.close();
        segment = { path: this.segmentPath(index), indexes: [], bytes: 0, metrics: 0 };
        this.segments.push(segment);
        this.active = await open(segment.path, "a");
      }
      await this.active.write(record);
      if (this.sync) await this.active.datasync();
      segment.indexes.push(index);
      segment.bytes += record.byteLength;
      if (type === "mx") segment.metrics++;
      await this.enforceCap();
    });
  }

  peek(max: number): Promise<OutboxRecord[]> {
    return this.queue.run(async () => {
      const found: OutboxRecord[] = [];
      for (const segment of this.segments) {
        if (lastIndexOf(segment) < this.cursor) continue;
        const { records } = parseRecords(await readFile(segment.path));
        for (const record of records) {
          if (record.index < this.cursor) continue;
          found.push(record);
          if (found.length >= max) return found;
        }
      }
      return found;
    });
  }

  ack(index: number): Promise<void> {
    return this.queue.run(async () => {
      if (index < this.cursor) return;
      this.cursor = index + 1;
      const temporary = join(this.options.dir, `${CURSOR_FILE}.tmp`);
      await writeFile(temporary, String(this.cursor));
      await rename(temporary, join(this.options.dir, CURSOR_FILE));
      while (this.segments.length > 0 && lastIndexOf(this.segments[0] as Segment) < this.cursor) {
        await this.dropSegment(0);
      }
    });
  }

  stats(): OutboxStats {
    let records = 0;
    for (const segment of this.segments) records += this.undelivered(segment);
    return { records, bytes: this.totalBytes(), evicted: this.evicted };
  }

  private undelivered(segment: Segment): number {
    let count = 0;
    for (const index of segment.indexes) if (index >= this.cursor) count++;
    return count;
  }

  private totalBytes(): number {
    let bytes = 0;
    for (const segment of this.segments) bytes += segment.bytes;
    return bytes;
  }

  close(): Promise<void> {
    return this.queue.run(async () => {
      await this.active?.close();
      this.active = undefined;
    });
  }

  private async load(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    const cursorText = await readFile(join(this.options.dir, CURSOR_FILE), "utf8").catch(() => "0");
    this.cursor = Number.parseInt(cursorText, 10) || 0;
    const names = (await readdir(this.options.dir)).filter((name) => name.endsWith(SEGMENT_SUFFIX)).sort();
    for (const name of names) {
      const path = join(this.options.dir, name);
      const { records, validBytes, totalBytes } = parseRecords(await readFile(path));
      if (validBytes < totalBytes) await truncate(path, validBytes);
      const last = records.at(-1);
      if (!last || last.index < this.cursor) {
        await rm(path, { force: true });
        continue;
      }
      this.segments.push({
        path,
        indexes: records.map((record) => record.index),
        bytes: validBytes,
        metrics: records.filter((record) => record.type === "mx").length,
      });
    }
    const lastSegment = this.segments.at(-1);
    this.nextIndex = Math.max(this.cursor, (lastSegment ? lastIndexOf(lastSegment) : -1) + 1);
    // Appends always start a fresh segment after a restart: the old tail may have been cut.
  }

  private segmentPath(firstIndex: number): string {
    return join(this.options.dir, `${String(firstIndex).padStart(16, "0")}${SEGMENT_SUFFIX}`);
  }

  private async dropSegment(position: number): Promise<void> {
    const [segment] = this.segments.splice(position, 1);
    if (!segment) return;
    if (position === this.segments.length) {
      await this.active?.close();
      this.active = undefined;
    }
    await rm(segment.path, { force: true });
  }

  /** Over the cap: rewrite the oldest segment holding metrics without them; else drop the oldest. */
  private async enforceCap(): Promise<void> {
    while (this.totalBytes() > this.options.maxBytes) {
      const position = this.segments.findIndex((segment) => segment.metrics > 0);
      if (position < 0) {
        const dropped = this.segments[0];
        if (!dropped) return;
        const count = this.undelivered(dropped);
        this.evicted += count;
        this.options.onEvict?.(count, "mixed");
        await this.dropSegment(0);
        continue;
      }
      const segment = this.segments[position] as Segment;
      const isActive = position === this.segments.length - 1;
      if (isActive) {
        await this.active?.close();
        this.active = undefined;
      }
      const { records } = parseRecords(await readFile(segment.path));
      const kept = records.filter((record) => record.type !== "mx");
      const dropped = records.filter((record) => record.type === "mx" && record.index >= this.cursor).length;
      this.evicted += dropped;
      this.options.onEvict?.(dropped, "mx");
      if (kept.length === 0) {
        await this.dropSegment(position);
        continue;
      }
      const bytes = Buffer.concat(kept.map(encodeRecord));
      const temporary = `${segment.path}.tmp`;
      await writeFile(temporary, bytes);
      await rename(temporary, segment.path);
      segment.bytes = bytes.byteLength;
      segment.indexes = kept.map((record) => record.index);
      segment.metrics = 0;
      if (isActive) this.active = await open(segment.path, "a");
    }
  }
}

function encodeRecord(record: OutboxRecord): Buffer {
  const body = Buffer.allocUnsafe(BODY_FIXED_BYTES + record.payload.byteLength);
  body.writeDoubleLE(record.index, 0);
  body.writeUInt8(DURABLE_UP_TYPES.indexOf(record.type), 8);
  body.writeDoubleLE(record.key, 9);
  body.set(record.payload, BODY_FIXED_BYTES);
  const header = Buffer.allocUnsafe(HEADER_BYTES);
  header.writeUInt32LE(body.byteLength, 0);
  header.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

/** Every intact record, and where the intact part ends (a torn or corrupt tail is not returned). */
function parseRecords(bytes: Buffer): { records: OutboxRecord[]; validBytes: number; totalBytes: number } {
  const records: OutboxRecord[] = [];
  let offset = 0;
  while (offset + HEADER_BYTES <= bytes.byteLength) {
    const length = bytes.readUInt32LE(offset);
    const end = offset + HEADER_BYTES + length;
    if (length < BODY_FIXED_BYTES || end > bytes.byteLength) break;
    const body = bytes.subarray(offset + HEADER_BYTES, end);
    if (crc32(body) !== bytes.readUInt32LE(offset + 4)) break;
    const type = DURABLE_UP_TYPES[body.readUInt8(8)];
    if (type === undefined) break;
    records.push({
      index: body.readDoubleLE(0),
      type,
      key: body.readDoubleLE(9),
      payload: new Uint8Array(body.subarray(BODY_FIXED_BYTES)),
    });
    offset = end;
  }
  return { records, validBytes: offset, totalBytes: bytes.byteLength };
}

/** Size of the outbox directory on disk (for tests and diagnostics). */
export async function outboxDiskBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith(SEGMENT_SUFFIX)) total += (await stat(join(dir, name))).size;
  }
  return total;
}
