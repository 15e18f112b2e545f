// A jest setup file (`setupFilesAfterEnv: ["atif/jest-setup"]`): registers `toMatchGolden` on
// the `expect` jest gives every test file.
import { matchers } from "./jest.js";

globalThis.expect.extend(matchers);
