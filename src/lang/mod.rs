//! The value model: numbers, types, values, conversion and unification.

pub mod convert;
pub mod display;
pub mod number;
pub mod types;
pub mod value;
