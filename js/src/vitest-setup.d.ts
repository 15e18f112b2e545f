// Registers `toMatchGolden` (see ./vitest.d.ts for its type).
import "./vitest.js";
