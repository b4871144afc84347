//! Functions a provider offers to configurations
//! (`provider::NAME::FUNCTION(…)`, Terraform 1.8's provider-defined
//! functions): their signatures, and how a call fails.

use strata_value::types::Type;

/// One parameter of a provider function.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionParam {
    pub name: String,
    /// The type each argument is converted to before the call (dynamic:
    /// as given).
    pub ty: Type,
    /// Whether null may be passed; otherwise a null argument is an error
    /// before the provider is asked.
    pub allow_null: bool,
    /// Whether unknown values are passed; otherwise a call with one is
    /// unknown, without asking the provider.
    pub allow_unknown: bool,
}

/// What a provider function takes and gives.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSig {
    pub params: Vec<FunctionParam>,
    /// Takes any number of further arguments of its type.
    pub variadic: Option<FunctionParam>,
    pub returns: Type,
}

impl FunctionSig {
    /// The parameter argument `i` is for.
    pub fn param(&self, i: usize) -> Option<&FunctionParam> {
        self.params.get(i).or(self.variadic.as_ref())
    }
}

/// A call the function refused: what it says, and the argument at fault
/// when it names one.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionFailure {
    pub text: String,
    pub argument: Option<usize>,
}

impl FunctionFailure {
    pub fn new(text: impl Into<String>) -> FunctionFailure {
        FunctionFailure {
            text: text.into(),
            argument: None,
        }
    }
}
