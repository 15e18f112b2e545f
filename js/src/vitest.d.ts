// The vitest integration: the `atif` fixture and `toMatchGolden`.
import type { TestAPI } from "vitest";

import type { Trajectory } from "./atif.js";
import type { GoldenOptions } from "./golden.js";

export type { GoldenOptions } from "./golden.js";
export { AtifError } from "./index.js";

/** The value of the `atif` fixture: the record/replay server of one test. */
export interface AtifServer {
  /** The server's origin, e.g. `http://127.0.0.1:41233` (OpenAI clients add `/v1`). */
  readonly url: string;
  /** The script this test replays (or records). */
  readonly script: string;
  /** True under `ATIF_RECORD=1`. */
  readonly recording: boolean;
  /** The ATIF trajectory the server captured from this test's model traffic so far. */
  trajectory(): Promise<Trajectory>;
}

/** vitest's `test` with the `atif` fixture. */
export declare const test: TestAPI<{ atif: AtifServer }>;
/** The same as `test`. */
export declare const it: TestAPI<{ atif: AtifServer }>;

declare module "vitest" {
  interface Assertion<T = any> {
    /** Compares the trajectory (an object, a file path, or the `atif` fixture) with the test's golden. */
    toMatchGolden(options?: GoldenOptions): Promise<void>;
  }
  interface AsymmetricMatchersContaining {
    toMatchGolden(options?: GoldenOptions): void;
  }
}
