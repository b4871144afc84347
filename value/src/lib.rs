//! Terraform's value model, shared by the engine and the drivers:
//! [`number`] (Go big.Float semantics), [`types`], [`value`] (typed nulls,
//! unknowns, the sensitive mark, `jsonencode`), [`convert`] (cty's
//! conversion and unification) and [`display`] (console rendering).
//!
//! It depends on nothing else of strata's, so a driver can take values
//! without taking the engine.

pub mod convert;
pub mod display;
pub mod json;
pub mod number;
pub mod typed_json;
pub mod types;
pub mod value;
