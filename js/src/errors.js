// The one error this package throws for what the user can fix: a missing script, golden or
// binary, a bad option. Its message names the file and the command to run next.

/** An error of the atif package, with a message that says what to do. */
export class AtifError extends Error {
  constructor(message) {
    super(message);
    this.name = "AtifError";
  }
}
