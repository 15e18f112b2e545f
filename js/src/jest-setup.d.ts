// Registers `toMatchGolden` on jest's `expect` (see ./jest.d.ts for its type).
import "./jest.js";
