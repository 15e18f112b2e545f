// The options of `toMatchGolden`: the comparison flags of `atif check` (docs/cli.md).

/** How a run is compared with its golden; each option is the `atif check` flag named beside it. */
export interface GoldenOptions {
  /** Tells several goldens of one test apart: `<file>__<test>__<name>.json`. */
  name?: string;
  /** `--preset`: start from a named preset, e.g. `claude-code`. */
  preset?: string;
  /** `--token-tolerance`: relative band allowed on prompt and completion tokens, e.g. 0.1. */
  tokenTolerance?: number;
  /** `false` is `--no-content`: do not compare the content hash. */
  compareContent?: boolean;
  /** `--volatile`: keys removed at every depth. */
  volatile?: string | string[];
  /** `--selector`: insta-style selectors whose values are removed, or replaced with `SELECTOR=TEXT`. */
  selectors?: string | string[];
  /** `--mask`: `REGEX=REPLACEMENT` masks of string values. */
  masks?: string | string[];
  /** `--keep-subagent-order`. */
  keepSubagentOrder?: boolean;
  /** `--secret-pattern`: also redact every match of these regular expressions. */
  secretPatterns?: string | string[];
  /** `--max-input-bytes`, e.g. `200MiB`. */
  maxInputBytes?: string;
  /** `--sequence`: the match mode of the tool sequence, e.g. `any-order`. */
  sequence?: string;
  /** `--arguments`: the match mode of tool arguments, e.g. `ignore`. */
  arguments?: string;
  /** `--arguments-for`: `TOOL=MODE`. */
  argumentsFor?: string | string[];
  /** `--number-tolerance`: numbers in arguments within this difference are equal. */
  numberTolerance?: number;
  /** `--step-band`: `N` or `P%`. */
  stepBand?: string;
  /** `--llm-calls-band`: `N` or `P%`. */
  llmCallsBand?: string;
  /** `--token-band`: `N` or `P%`. */
  tokenBand?: string;
}
