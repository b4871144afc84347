//! Drivers built into the engine: `terraform_data`, with Terraform's own
//! semantics, so the same `.tf` files run under Terraform and strata.

pub mod terraform_data;
