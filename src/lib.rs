//! strata: a declarative infrastructure engine that reads Terraform's language.
//!
//! The language half, stage by stage (see ARCHITECTURE.md):
//! [`syntax`] parses files into spanned trees, [`lang`] holds the value model,
//! [`eval`] evaluates expressions with [`funcs`], [`config`] builds the typed
//! configuration, [`console`] and [`cli`] are the user's entry points.

pub mod apply;
pub mod backends;
pub mod builtin;
pub mod cli;
pub mod cluster;
pub mod comment;
pub mod config;
pub mod console;
pub mod cost;
pub mod diag;
pub mod engine;
pub mod eval;
pub mod fmt;
pub mod funcs;
pub mod graph;
pub mod install;
pub mod interrupt;
pub mod limits;
pub mod par;
pub mod placement;
pub mod plan;
pub mod provision;
pub mod render;
/// The value model lives in its own crate so drivers can use it without the engine.
pub use strata_value as lang;
pub mod statecmd;
pub mod syntax;
pub mod timings;
pub mod ui;
pub mod walk;
