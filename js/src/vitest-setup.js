// A vitest setup file (`setupFiles: ["atif/vitest-setup"]`): registers `toMatchGolden` for every
// test file, for tests that compare trajectories without the `atif` fixture.
import "./vitest.js";
