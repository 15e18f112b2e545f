//! One module per subcommand, each with its clap `Args` and a `run` function.

pub(crate) mod check;
pub(crate) mod ci;
pub(crate) mod completions;
pub(crate) mod diff;
pub(crate) mod envelope;
pub(crate) mod golden;
pub(crate) mod harness;
pub(crate) mod import;
pub(crate) mod live;
pub(crate) mod matching;
pub(crate) mod mcp;
pub(crate) mod normalize;
pub(crate) mod page;
pub(crate) mod proxy;
pub(crate) mod schema;
pub(crate) mod script;
pub(crate) mod shape;
pub(crate) mod upgrade;
pub(crate) mod validate;
pub(crate) mod view;
