/**
 * Label selectors with Kubernetes syntax, over the string-to-string `node.labels` map:
 *
 *   site=plant-7,tier!=canary     equality (`=` or `==`) and inequality
 *   env in (prod,staging)         set membership
 *   env notin (dev)               set exclusion
 *   gpu                           the key exists
 *   !gpu                          the key does not exist
 *
 * Requirements are separated by commas and must all hold. As in Kubernetes, `!=` and `notin`
 * also match nodes that lack the key. The empty selector matches every node.
 */
import { Prisma } from "@edgefleet/db";
import { LABEL_KEY, LABEL_VALUE } from "../schemas/labels";

// Input schemas live in ../schemas (zod only) so the console can validate with them too.
export { LABEL_KEY, LABEL_VALUE };

export type SelectorRequirement =
  | { key: string; op: "eq" | "neq"; value: string }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "notexists" };

/** A selector that does not parse: `position` is the 0-based character offset of the problem. */
export class SelectorSyntaxError extends Error {
  override name = "SelectorSyntaxError";
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`invalid selector at position ${position}: ${reason}`);
  }
}

export const SELECTOR_MAX_LENGTH = 1000;
const WORD_CHAR = /[-A-Za-z0-9_./]/;

type Token =
  | { kind: "word"; text: string; at: number }
  | { kind: "op"; text: "=" | "==" | "!=" | "!"; at: number }
  | { kind: "punct"; text: "," | "(" | ")"; at: number }
  | { kind: "end"; at: number };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch === " " || ch === "\t") {
      i++;
    } else if (ch === "," || ch === "(" || ch === ")") {
      tokens.push({ kind: "punct", text: ch, at: i });
      i++;
    } else if (ch === "=") {
      const double = input[i + 1] === "=";
      tokens.push({ kind: "op", text: double ? "==" : "=", at: i });
      i += double ? 2 : 1;
    } else if (ch === "!") {
      const neq = input[i + 1] === "=";
      tokens.push({ kind: "op", text: neq ? "!=" : "!", at: i });
      i += neq ? 2 : 1;
    } else if (WORD_CHAR.test(ch)) {
      const start = i;
      while (i < input.length && WORD_CHAR.test(input[i] as string)) i++;
      tokens.push({ kind: "word", text: input.slice(start, i), at: start });
    } else {
      throw new SelectorSyntaxError(i, `unexpected character ${JSON.stringify(ch)}`);
    }
  }
  tokens.push({ kind: "end", at: input.length });
  return tokens;
}

function describe(token: Token): string {
  return token.kind === "end" ? "end of input" : JSON.stringify(token.text);
}

/** Parses a selector; throws SelectorSyntaxError with the position of the first problem. */
export function parseSelector(input: string): SelectorRequirement[] {
  if (input.length > SELECTOR_MAX_LENGTH) {
    throw new SelectorSyntaxError(SELECTOR_MAX_LENGTH, `longer than ${SELECTOR_MAX_LENGTH} characters`);
  }
  const tokens = tokenize(input);
  let index = 0;
  const peek = () => tokens[index] as Token;
  const next = () => tokens[index++] as Token;

  const key = (): string => {
    const token = next();
    if (token.kind !== "word")
      throw new SelectorSyntaxError(token.at, `expected a label key, found ${describe(token)}`);
    if (!LABEL_KEY.test(token.text))
      throw new SelectorSyntaxError(token.at, `invalid label key ${JSON.stringify(token.text)}`);
    return token.text;
  };
  const value = (): string => {
    const token = next();
    if (token.kind !== "word")
      throw new SelectorSyntaxError(token.at, `expected a value, found ${describe(token)}`);
    if (!LABEL_VALUE.test(token.text))
      throw new SelectorSyntaxError(token.at, `invalid value ${JSON.stringify(token.text)}`);
    return token.text;
  };
  const valueSet = (): string[] => {
    const open = next();
    if (open.kind !== "punct" || open.text !== "(") {
      throw new SelectorSyntaxError(open.at, `expected "(" after in/notin, found ${describe(open)}`);
    }
    const values = [value()];
    for (;;) {
      const token = next();
      if (token.kind === "punct" && token.text === ")") return values;
      if (token.kind === "punct" && token.text === ",") values.push(value());
      else throw new SelectorSyntaxError(token.at, `expected "," or ")", found ${describe(token)}`);
    }
  };

  const requirement = (): SelectorRequirement => {
    const first = peek();
    if (first.kind === "op" && first.text === "!") {
      next();
      return { key: key(), op: "notexists" };
    }
    const name = key();
    const token = peek();
    if (token.kind === "end" || (token.kind === "punct" && token.text === ","))
      return { key: name, op: "exists" };
    next();
    if (token.kind === "op" && token.text !== "!") {
      return { key: name, op: token.text === "!=" ? "neq" : "eq", value: value() };
    }
    if (token.kind === "word" && (token.text === "in" || token.text === "notin")) {
      return { key: name, op: token.text, values: valueSet() };
    }
    throw new SelectorSyntaxError(
      token.at,
      `expected "=", "!=", "in", "notin", "," or end, found ${describe(token)}`,
    );
  };

  if (peek().kind === "end") return [];
  const requirements = [requirement()];
  for (;;) {
    const token = next();
    if (token.kind === "end") return requirements;
    if (token.kind !== "punct" || token.text !== ",") {
      throw new SelectorSyntaxError(token.at, `expected "," or end, found ${describe(token)}`);
    }
    requirements.push(requirement());
  }
}

/** Whether a label map satisfies the requirements (the in-memory twin of `selectorSql`). */
export function matchesSelector(
  requirements: SelectorRequirement[],
  labels: Record<string, string>,
): boolean {
  return requirements.every((r) => matchesRequirement(r, labels));
}

function matchesRequirement(r: SelectorRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const actual = labels[r.key];
  switch (r.op) {
    case "eq":
      return actual === r.value;
    case "neq":
      return actual !== r.value;
    case "in":
      return has && r.values.includes(actual as string);
    case "notin":
      return !has || !r.values.includes(actual as string);
    case "exists":
      return has;
    case "notexists":
      return !has;
  }
}

/**
 * SQL condition over `<column>` (a JSONB label map). Positive requirements use containment
 * (`@>`) and key existence (`?`), which the GIN index on node.labels answers; negative ones are
 * the NOT of those, evaluated on the rows the other conditions leave.
 */
export function selectorSql(requirements: SelectorRequirement[], column = Prisma.sql`labels`): Prisma.Sql {
  if (requirements.length === 0) return Prisma.sql`TRUE`;
  return Prisma.join(
    requirements.map((r) => requirementSql(r, column)),
    " AND ",
  );
}

function requirementSql(r: SelectorRequirement, column: Prisma.Sql): Prisma.Sql {
  const contains = (value: string) => Prisma.sql`${column} @> ${JSON.stringify({ [r.key]: value })}::jsonb`;
  switch (r.op) {
    case "eq":
      return contains(r.value);
    case "neq":
      return Prisma.sql`NOT ${contains(r.value)}`;
    case "in":
      return Prisma.sql`(${Prisma.join(r.values.map(contains), " OR ")})`;
    case "notin":
      return Prisma.sql`NOT (${Prisma.join(r.values.map(contains), " OR ")})`;
    case "exists":
      return Prisma.sql`${column} ? ${r.key}`;
    case "notexists":
      return Prisma.sql`NOT (${column} ? ${r.key})`;
  }
}
