//! Terraform's language as strata reads it, stage by stage (see
//! ARCHITECTURE.md): [`syntax`] parses files into spanned trees, [`lang`]
//! is the value model, [`eval`] evaluates expressions with [`funcs`],
//! [`config`] builds the typed configuration, [`fmt`] writes files back in
//! Terraform's canonical layout, and [`diag`] says what went wrong where.
//!
//! The crate knows nothing of plans, drivers or the command line: the
//! engine (the `strata` crate) uses it, never the other way round, and the
//! compiler holds that.

// The language writes to no terminal: it returns values to its users.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod diag;
pub mod eval;
pub mod fmt;
pub mod funcs;
pub mod limits;
pub mod par;
pub mod syntax;
/// The value model, a crate of its own so drivers can use it without the
/// language.
pub use strata_value as lang;
