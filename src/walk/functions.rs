//! The providers' functions (`provider::NAME::FUNCTION(…)`), as a run's
//! expressions call them: arguments checked against the function's
//! parameters and converted to their types as Terraform does, a call with
//! an unknown argument the function does not take unknown without asking
//! the provider, then the driver's call.

use crate::builtin::{source_of, Drivers};
use crate::config::ProviderFunctions;
use crate::eval::CallFailure;
use crate::lang::convert::convert;
use crate::lang::value::Value;
use strata_provider::{Driver, FunctionSig};

/// The functions of every driver of a run.
pub struct Functions(pub Drivers);

impl ProviderFunctions for Functions {
    fn call(
        &self,
        source: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Option<Result<Value, CallFailure>> {
        let driver = self
            .0
            .all()
            .find(|d| source_of(d.as_ref()) == source && d.functions().contains_key(function))?;
        let sig = driver.functions().get(function)?;
        Some(call(driver.as_ref(), sig, function, args))
    }
}

fn failure(text: String, argument: Option<usize>) -> CallFailure {
    CallFailure { text, argument }
}

fn call(
    driver: &dyn Driver,
    sig: &FunctionSig,
    function: &str,
    args: Vec<Value>,
) -> Result<Value, CallFailure> {
    let least = sig.params.len();
    let too_many = args.len() > least && sig.variadic.is_none();
    if args.len() < least || too_many {
        let text = format!(
            "the function takes {least} argument(s), and {} were given",
            args.len()
        );
        // Too many: the first one too many is at fault.
        return Err(failure(text, too_many.then_some(least)));
    }
    let mut converted = Vec::with_capacity(args.len());
    let mut unknown = false;
    for (i, a) in args.into_iter().enumerate() {
        let Some(p) = sig.param(i) else {
            return Err(failure("no parameter takes this argument".into(), Some(i)));
        };
        if a.is_null() && !p.allow_null {
            let text = format!("argument {:?} must not be null", p.name);
            return Err(failure(text, Some(i)));
        }
        let v = convert(&a, &p.ty)
            .map_err(|e| failure(format!("argument {:?}: {e}", p.name), Some(i)))?;
        unknown |= !p.allow_unknown && !v.is_wholly_known();
        converted.push(v);
    }
    if unknown {
        return Ok(Value::Unknown(sig.returns.clone()));
    }
    driver
        .call_function(function, converted)
        .map_err(|f| failure(f.text, f.argument))
}
