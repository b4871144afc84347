//! Renderings of a plan: [`human`] (Terraform's layout and symbols),
//! [`json`] (Terraform's plan JSON format 1.2) and [`markdown`] (a
//! pull-request comment); [`drift`] the drift report in all three.
//! [`diff`] writes one value's change; [`cost`] the plan's cost for
//! people (the JSON carries `Cost::to_json`); [`placement`] where placed
//! node pools go; [`report`] what `strata report` sums.

pub mod config;
pub mod cost;
pub mod diff;
pub mod drift;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod placement;
pub mod query;
pub mod report;
pub mod ui;
