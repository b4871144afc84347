//! AWS errors as driver errors: the operation, AWS's code and message, and
//! whether trying again may help. The SDK itself retries throttling and
//! 5xx responses (with the raised limit set in `lib.rs`) before this.

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use strata_provider::DriverError;

/// Codes that say "not now" rather than "no".
const RETRYABLE: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "ServiceUnavailable",
    "InternalError",
    "InternalFailure",
];

/// Codes (and health-issue codes) that say "no capacity for this now".
pub const CAPACITY: &[&str] = &[
    "InsufficientInstanceCapacity",
    "InsufficientHostCapacity",
    "InsufficientReservedInstanceCapacity",
    "InsufficientCapacity",
    "InsufficientCapacityException",
    "Ec2InsufficientCapacity",
    "Unsupported",
];

/// Codes a create meets when its object is there already (for one made
/// by a retried call whose first answer was lost, among others).
const ALREADY_EXISTS: &[&str] = &[
    "EntityAlreadyExists",
    "InvalidGroup.Duplicate",
    "InvalidSubnet.Conflict",
    "InvalidPermission.Duplicate",
    "InvalidLaunchTemplateName.AlreadyExistsException",
    "BucketAlreadyOwnedByYou",
    "ResourceInUseException",
];

/// A failure whose text names a capacity code is a capacity failure.
pub fn classify(operation: &str, detail: String, retryable: bool) -> DriverError {
    strata_provider::classify(operation, detail, retryable, CAPACITY)
}

/// Codes that say the thing asked about is not there: a refresh treats
/// them as "deleted outside strata".
pub const NOT_FOUND: &[&str] = &[
    "NoSuchEntity",
    "InvalidVpcID.NotFound",
    "InvalidSubnetID.NotFound",
    "InvalidInternetGatewayID.NotFound",
    "InvalidAllocationID.NotFound",
    "InvalidRouteTableID.NotFound",
    "InvalidRoute.NotFound",
    "InvalidAssociationID.NotFound",
    "InvalidGroup.NotFound",
    "InvalidSecurityGroupRuleId.NotFound",
    "InvalidPermission.NotFound",
    "NatGatewayNotFound",
    // A detach retried after its answer was lost: already done.
    "Gateway.NotAttached",
    "InvalidLaunchTemplateId.NotFound",
    "InvalidLaunchTemplateName.NotFoundException",
    "ResourceNotFoundException",
    "NoSuchBucket",
    "NotFound",
];

/// The error's AWS code, when it carries one.
pub fn code<E: ProvideErrorMetadata, R>(e: &SdkError<E, R>) -> Option<&str> {
    match e {
        SdkError::ServiceError(s) => s.err().code(),
        _ => None,
    }
}

pub fn is_not_found<E: ProvideErrorMetadata, R>(e: &SdkError<E, R>) -> bool {
    code(e).is_some_and(|c| NOT_FOUND.contains(&c))
}

/// A delete's outcome: `true` when it happened, `false` when the object
/// was already gone (which is what a delete wants); other errors as [`api`].
pub fn deleted<T, E, R>(operation: &str, r: Result<T, SdkError<E, R>>) -> Result<bool, DriverError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    match r {
        Ok(_) => Ok(true),
        Err(e) if is_not_found(&e) => Ok(false),
        Err(e) => Err(api(operation, e)),
    }
}

pub fn api<E, R>(operation: &str, e: SdkError<E, R>) -> DriverError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    let (detail, retryable) = match &e {
        SdkError::ServiceError(s) => {
            let err = s.err();
            let c = err.code().unwrap_or("Unknown");
            let m = err.message().unwrap_or("(no message)");
            if ALREADY_EXISTS.contains(&c) {
                return DriverError::AlreadyExists {
                    operation: operation.to_string(),
                    detail: format!("{c}: {m}"),
                };
            }
            (format!("{c}: {m}"), RETRYABLE.contains(&c))
        }
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) => (
            format!("the request did not complete: {}", aws_smithy_display(&e)),
            true,
        ),
        other => (aws_smithy_display(other), false),
    };
    classify(operation, detail, retryable)
}

/// The whole chain of an error, which the SDK keeps in `source()`s.
fn aws_smithy_display(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

/// The encoded part of an `UnauthorizedOperation` message.
pub fn encoded_message(detail: &str) -> Option<&str> {
    const MARK: &str = "Encoded authorization failure message: ";
    let at = detail.find(MARK)? + MARK.len();
    detail[at..].split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_encoded_message_and_the_capacity_kind() {
        let d = "UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: AbC-12_x";
        assert_eq!(encoded_message(d), Some("AbC-12_x"));
        assert_eq!(encoded_message("AccessDenied: no"), None);
        assert!(matches!(
            classify(
                "RunInstances",
                "InsufficientInstanceCapacity: none in us-east-1a".into(),
                false
            ),
            DriverError::Capacity { .. }
        ));
        assert!(matches!(
            classify("CreateVpc", "VpcLimitExceeded: too many".into(), false),
            DriverError::Api { .. }
        ));
    }
}
