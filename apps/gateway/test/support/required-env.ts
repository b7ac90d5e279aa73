/**
 * Integration tests run against the real stack; a missing variable is a broken test setup,
 * so it fails loudly instead of skipping (a skipped suite would look green in CI).
 */
export function requireTestEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: integration tests need the real stack (run them through ./edgefleet test, or export var/test/stack.env)`,
    );
  }
  return value;
}
