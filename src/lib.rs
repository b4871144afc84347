//! strata: a declarative infrastructure engine that reads Terraform's language.
//!
//! The language (syntax, configuration, evaluation, functions, fmt,
//! diagnostics) is the `strata-lang` crate, re-exported here under the
//! same names; this crate is the engine over it (graph, plan, apply,
//! state, drivers, cluster spec) and the user's entry points ([`console`],
//! [`cli`]). See ARCHITECTURE.md.

// Only the CLI's printer writes to the terminal (and says so where it
// allows itself); every other stage returns values (ARCHITECTURE.md).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub use strata_lang::{config, diag, eval, fmt, funcs, limits, par, syntax};

pub mod apply;
pub mod backends;
pub mod builtin;
pub mod cli;
pub mod cluster;
pub mod comment;
pub mod console;
pub mod cost;
pub mod engine;
pub mod graph;
pub mod install;
pub mod interrupt;
pub mod placement;
pub mod plan;
pub mod provision;
pub mod render;
pub mod report;
pub mod runtime;
/// The value model lives in its own crate so drivers can use it without the engine.
pub use strata_value as lang;
pub mod statecmd;
pub mod timings;
pub mod ui;
pub mod walk;
