//! Objects the cloud cannot delete, known by provider and type, so that a
//! provider plugin serving them (the AWS provider in a directory Terraform
//! initialised) is held to the same truth as strata's own driver: a
//! Capacity Block for ML is a final purchase ("You can't modify or cancel
//! a Capacity Block", EC2's CancelCapacityReservation), and the AWS
//! provider's delete of one does nothing while its plan says "destroy".

use crate::values::string;
use strata_value::value::Value;

/// The AWS provider, as provider addresses name it.
const AWS: &str = "registry.terraform.io/hashicorp/aws";

/// Why `type_name`'s object `prior` outlives a delete, when it does.
pub fn known(provider: &str, type_name: &str, prior: &Value) -> Option<String> {
    match (provider, type_name) {
        (AWS, "aws_ec2_capacity_block_reservation") => {
            let until =
                string(prior, "end_date").map_or(" to its end".into(), |e| format!(" until {e}"));
            Some(format!(
                "a Capacity Block cannot be cancelled: EC2 keeps it, and bills it,{until}"
            ))
        }
        _ => None,
    }
}

/// [`known`] for strata's own AWS driver, which is that provider.
pub fn aws(type_name: &str, prior: &Value) -> Option<String> {
    known(AWS, type_name, prior)
}
