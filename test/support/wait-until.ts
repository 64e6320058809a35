/**
 * Polls `probe` every few milliseconds until it gives something other than `undefined` or `false`, and resolves
 * with that value; fails after the deadline. A boolean condition resolves once it holds, a lookup once it finds.
 */
export async function waitUntil<T>(probe: () => T | Promise<T>, timeoutMs = 10_000): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
