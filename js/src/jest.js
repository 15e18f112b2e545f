// The jest integration: `toMatchGolden`, for `expect.extend` (or the setup file atif/jest-setup).
import { goldenMatcher } from "./matcher.js";

/** jest's `toMatchGolden`: the golden of the test that runs the assertion. */
export const toMatchGolden = goldenMatcher("jest", (state) => {
  const fullName = String(state.currentTestName ?? "");
  return { file: state.testPath, names: [fullName], fullName };
});

/** The matchers, for `expect.extend(matchers)`. */
export const matchers = { toMatchGolden };
export { AtifError } from "./errors.js";
