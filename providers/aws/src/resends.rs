//! The SDK's retries, told to the apply: an attempt after the first is a
//! resend, and a create resent may have been carried out twice (see
//! `strata_provider::resend`).

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::retries::RequestAttempts;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

/// Put on every client: notes each attempt past the first.
#[derive(Debug)]
pub struct Resends;

impl Intercept for Resends {
    fn name(&self) -> &'static str {
        "strata-resends"
    }

    fn read_before_attempt(
        &self,
        _: &BeforeTransmitInterceptorContextRef<'_>,
        _: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if cfg
            .load::<RequestAttempts>()
            .is_some_and(|a| a.attempts() > 1)
        {
            strata_provider::resend::note();
        }
        Ok(())
    }
}
