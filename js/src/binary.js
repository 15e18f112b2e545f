// Finding the `atif` binary: $ATIF_BIN, else the platform package npm installed beside us.
import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";

import { AtifError } from "./errors.js";

const require = createRequire(import.meta.url);

/** The npm platform package holding the binary for this machine, e.g. `@atif/cli-linux-x64`. */
export function platformPackage(platform = process.platform, arch = process.arch) {
  return `@atif/cli-${platform}-${arch}`;
}

/**
 * The path of the `atif` binary to run: `$ATIF_BIN` when set, else the binary inside this
 * platform's package, which npm installs through the `optionalDependencies` of `atif`.
 */
export function atifBinary() {
  const named = process.env.ATIF_BIN;
  if (named) {
    if (isExecutable(named)) return named;
    throw new AtifError(
      `ATIF_BIN is set to ${named}, which is not an executable file: point it at the atif ` +
        "binary, or unset it to use the one of the installed platform package",
    );
  }
  const pkg = platformPackage();
  const exe = process.platform === "win32" ? "atif.exe" : "atif";
  let path;
  try {
    path = require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    throw new AtifError(
      `the atif binary was not found: the package ${pkg} is not installed. npm installs it ` +
        "with atif unless optional dependencies were left out (--omit=optional, " +
        "--no-optional): reinstall atif without that flag, or set ATIF_BIN to an atif binary",
    );
  }
  if (!isExecutable(path)) {
    throw new AtifError(`${path} (from ${pkg}) is not executable: reinstall ${pkg}`);
  }
  return path;
}

function isExecutable(path) {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
