// File names for a test's script and golden, the way the pytest plugin and the Rust golden
// names make them: `<file>__<suite>__<test>`, every part made safe as a file name.
import { basename, extname } from "node:path";

const OUTSIDE_SAFE = /[^A-Za-z0-9_.-]+/g;

/**
 * One part of a name made safe as a file name: every run of characters outside
 * `[A-Za-z0-9_.-]` becomes `_`, and `..` or a leading dot become `_` too, so no name can leave
 * its folder.
 */
export function sanitize(part) {
  let safe = part.replace(OUTSIDE_SAFE, "_").replaceAll("..", "_");
  if (safe.startsWith(".")) safe = `_${safe.slice(1)}`;
  return safe || "_";
}

/** The stem of a test file: `tests/agent.test.ts` gives `agent.test`. */
export function fileStem(path) {
  const name = basename(path);
  return name.slice(0, name.length - extname(name).length);
}

/** `<file>__<suite>__…__<test>`: the base name of a test's script and golden. */
export function baseName(testFile, names) {
  return [fileStem(testFile), ...names].map(sanitize).join("__");
}
