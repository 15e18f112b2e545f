//! Helpers shared by several subcommands: reading inputs, normalisation flags.
