// The jest integration: `toMatchGolden`, for `expect.extend(matchers)` or atif/jest-setup.
import type { GoldenOptions } from "./golden.js";

export type { GoldenOptions } from "./golden.js";
export { AtifError } from "./index.js";

/** The matchers, for `expect.extend(matchers)`. */
export declare const matchers: {
  toMatchGolden(this: unknown, received: unknown, options?: GoldenOptions): Promise<{ pass: boolean; message(): string }>;
};

declare module "expect" {
  interface Matchers<R extends void | Promise<void>, T = unknown> {
    /** Compares the trajectory (an object or a file path) with the test's golden. */
    toMatchGolden(options?: GoldenOptions): Promise<R>;
  }
}
