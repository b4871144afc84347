//! AWS errors as driver errors: the operation, AWS's code and message, and
//! whether trying again may help. The SDK itself retries throttling and
//! 5xx responses (with the raised limit set in `lib.rs`) before this.

use aws_sdk_ec2::error::{ProvideErrorMetadata, SdkError};
use strata_provider::{CapacityCodes, DriverError, Place, Reach};

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

/// Codes (and health-issue codes) that say "no capacity for this now",
/// and how far each reaches: EC2's shortages are a zone's (its messages
/// name it: "…capacity in the Availability Zone you requested
/// (us-east-1a)"), a vCPU or spot-count limit the region's.
pub const CAPACITY: &CapacityCodes = &CapacityCodes {
    codes: &[
        ("InsufficientInstanceCapacity", Reach::Zone),
        ("InsufficientHostCapacity", Reach::Zone),
        ("InsufficientReservedInstanceCapacity", Reach::Zone),
        // A targeted Capacity Reservation without the instances asked
        // for: that place (the reservation, in its zone) has none now.
        ("ReservationCapacityExceeded", Reach::Zone),
        ("InsufficientCapacity", Reach::Zone),
        ("Ec2InsufficientCapacity", Reach::Zone),
        // EKS refusing a node group whose zone "does not currently have
        // sufficient capacity to support the node group".
        ("UnsupportedAvailabilityZoneException", Reach::Zone),
        ("Unsupported", Reach::Zone),
        ("InsufficientCapacityException", Reach::Region),
        ("VcpuLimitExceeded", Reach::Region),
        ("MaxSpotInstanceCountExceeded", Reach::Region),
    ],
    locate,
};

/// The zone (`us-east-1a`) and region (`us-east-1`) a message names; a
/// zone names its region too.
fn locate(message: &str) -> Place {
    let mut place = Place::default();
    for w in message.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if place.zone.is_none()
            && w.ends_with(|c: char| c.is_ascii_lowercase())
            && is_region(&w[..w.len() - 1])
        {
            place.zone = Some(w.to_string());
            place.region = place.region.or_else(|| Some(w[..w.len() - 1].to_string()));
        } else if place.region.is_none() && is_region(w) {
            place.region = Some(w.to_string());
        }
    }
    place
}

/// `us-east-1`, `ap-southeast-2`, `us-gov-west-1`.
fn is_region(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts[0].bytes().all(|b| b.is_ascii_lowercase())
        && parts[1..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts[parts.len() - 1].bytes().all(|b| b.is_ascii_digit())
        && !parts[parts.len() - 1].is_empty()
}

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
    "InvalidCapacityReservationId.NotFound",
    "InvalidLaunchTemplateName.NotFoundException",
    "ResourceNotFoundException",
    "NoSuchBucket",
    "NoSuchLifecycleConfiguration",
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

/// A read's outcome: the answer, or `None` when the object is not there;
/// other errors as [`api`].
pub fn found<T, E, R>(
    operation: &str,
    r: Result<T, SdkError<E, R>>,
) -> Result<Option<T>, DriverError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug,
{
    match r {
        Ok(out) => Ok(Some(out)),
        Err(e) if is_not_found(&e) => Ok(None),
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
            format!(
                "the request did not complete: {}",
                strata_provider::error_chain(&e)
            ),
            true,
        ),
        other => (strata_provider::error_chain(other), false),
    };
    classify(operation, detail, retryable)
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
    use strata_provider::Shortage;

    #[test]
    fn finds_the_encoded_message_and_the_capacity_kind() {
        let d = "UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: AbC-12_x";
        assert_eq!(encoded_message(d), Some("AbC-12_x"));
        assert_eq!(encoded_message("AccessDenied: no"), None);
        let e = classify(
            "RunInstances",
            "InsufficientInstanceCapacity: We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested (us-east-1a).".into(),
            false,
        );
        assert!(
            matches!(&e, DriverError::Capacity { shortage: Shortage::Zone(Some(z)), .. } if z == "us-east-1a"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("lack of capacity in zone us-east-1a"),
            "{e}"
        );
        let e = classify(
            "RunInstances",
            "VcpuLimitExceeded: You have requested more vCPU capacity than your current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to in us-west-2.".into(),
            false,
        );
        assert!(
            matches!(&e, DriverError::Capacity { shortage: Shortage::Region(Some(r)), .. } if r == "us-west-2"),
            "{e:?}"
        );
        let e = classify(
            "CreateNodegroup",
            "ReservationCapacityExceeded: The Capacity Reservation cr-0a1b2c3d4e5f67890 in us-east-1b has 0 instances available; 2 asked.".into(),
            false,
        );
        assert!(
            matches!(&e, DriverError::Capacity { shortage: Shortage::Zone(Some(z)), .. } if z == "us-east-1b"),
            "{e:?}"
        );
        assert_eq!(locate("none here: subnet-0abc, sg-12"), Place::default());
        assert!(matches!(
            classify("CreateVpc", "VpcLimitExceeded: too many".into(), false),
            DriverError::Api { .. }
        ));
    }
}
