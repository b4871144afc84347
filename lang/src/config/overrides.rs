//! Terraform's override files: `override.tf` and `*_override.tf` are read
//! last and merged into the blocks they name. An attribute replaces the
//! attribute of the same name; nested blocks of a type replace all nested
//! blocks of that type; a local value replaces the local of the same name.

use crate::diag::{Diag, Diags};
use crate::syntax::{Block, Body};

fn same_block(a: &Block, b: &Block) -> bool {
    a.kind == b.kind
        && a.labels.len() == b.labels.len()
        && a.labels.iter().zip(&b.labels).all(|(x, y)| x.0 == y.0)
}

fn merge_into(base: &mut Block, over: Block) {
    for attr in over.body.attrs {
        match base.body.attrs.iter_mut().find(|a| a.name == attr.name) {
            Some(existing) => *existing = attr,
            None => base.body.attrs.push(attr),
        }
    }
    let kinds: Vec<String> = over.body.blocks.iter().map(|b| b.kind.clone()).collect();
    base.body.blocks.retain(|b| !kinds.contains(&b.kind));
    base.body.blocks.extend(over.body.blocks);
}

pub(super) fn apply(bodies: &mut [Body], over: Body, diags: &mut Diags) {
    for block in over.blocks {
        match block.kind.as_str() {
            "locals" => {
                for attr in block.body.attrs {
                    let target = bodies
                        .iter_mut()
                        .flat_map(|b| b.blocks.iter_mut())
                        .filter(|b| b.kind == "locals")
                        .flat_map(|b| b.body.attrs.iter_mut())
                        .find(|a| a.name == attr.name);
                    match target {
                        Some(existing) => *existing = attr,
                        None => diags.push(
                            Diag::new(
                                "strata::config::override",
                                "Missing base local value definition to override",
                                format!("There is no local value named {:?}. An override file can only override a local value that is defined in a primary configuration file.", attr.name),
                            )
                            .at(attr.name_span),
                        ),
                    }
                }
            }
            "terraform" | "strata" => {
                match bodies
                    .iter_mut()
                    .flat_map(|b| b.blocks.iter_mut())
                    .find(|b| b.kind == block.kind)
                {
                    Some(base) => merge_into(base, block),
                    None => {
                        if let Some(first) = bodies.first_mut() {
                            first.blocks.push(block);
                        }
                    }
                }
            }
            _ => {
                let base = bodies
                    .iter_mut()
                    .flat_map(|b| b.blocks.iter_mut())
                    .find(|b| same_block(b, &block));
                match base {
                    Some(base) => merge_into(base, block),
                    None => {
                        let name: Vec<&str> = block.labels.iter().map(|l| l.0.as_str()).collect();
                        diags.push(
                            Diag::new(
                                "strata::config::override",
                                format!("Missing base {} to override", block.kind),
                                format!(
                                    "There is no {} block {} in a primary configuration file; an override file can only override what a primary file declares.",
                                    block.kind,
                                    name.join(".")
                                ),
                            )
                            .at(block.kind_span),
                        );
                    }
                }
            }
        }
    }
}
