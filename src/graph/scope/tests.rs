use super::*;
use crate::diag::Sources;
use strata_state::model::InstanceKey;

/// b uses a; c stands alone; d uses b; module m (no resources of the
/// root's) holds x; output o uses b, output p uses c and a.
const CONFIG: &str = r#"
resource "terraform_data" "a" {
  count = 2
}
resource "terraform_data" "b" {
  input = terraform_data.a[0].id
}
resource "terraform_data" "c" {}
resource "terraform_data" "d" {
  input = terraform_data.b.id
}
module "m" {
  source = "./m"
}
output "o" { value = terraform_data.b.id }
output "p" { value = [terraform_data.c.id, terraform_data.a[1].id] }
"#;

fn graph() -> Graph {
    let mut sources = Sources::default();
    let module = crate::config::load_text("main.tf", CONFIG, &mut sources).expect("config");
    crate::graph::build(&module, &sources).expect("graph")
}

fn scope(targets: &[&str], excludes: &[&str]) -> Scope {
    let read = |t: &[&str]| {
        t.iter()
            .map(|x| Target::parse(x).expect("target"))
            .collect()
    };
    Scope {
        targets: read(targets),
        excludes: read(excludes),
    }
}

/// The narrowed graph's resources and outputs, by address.
fn kept(s: &Scope) -> Vec<String> {
    let g = s.narrow(&graph());
    let mut out: Vec<String> = g
        .graph
        .node_weights()
        .filter(|n| n.is_resource() || n.kind == NodeKind::Output)
        .map(|n| n.addr())
        .collect();
    out.sort();
    out
}

fn addr(text: &str) -> Address {
    Address::parse(text).expect("address")
}

#[test]
fn a_target_keeps_what_it_depends_on_and_the_outputs_it_alone_feeds() {
    assert_eq!(
        kept(&scope(&["terraform_data.b"], &[])),
        ["output.o", "terraform_data.a", "terraform_data.b"]
    );
    // p needs a and c: with both targeted it follows.
    assert_eq!(
        kept(&scope(&["terraform_data.c", "terraform_data.a[1]"], &[])),
        ["output.p", "terraform_data.a", "terraform_data.c"]
    );
}

#[test]
fn an_exclusion_drops_what_depends_on_it() {
    assert_eq!(
        kept(&scope(&[], &["terraform_data.b"])),
        ["output.p", "terraform_data.a", "terraform_data.c"]
    );
    // Named with a key, a resource stays: its other instances are planned
    // (and outputs read the one left alone as it is); what depends on any
    // of it goes.
    assert_eq!(
        kept(&scope(&[], &["terraform_data.a[1]"])),
        ["output.p", "terraform_data.a", "terraform_data.c"]
    );
    let s = scope(&[], &["terraform_data.a[1]"]);
    assert!(!s.plans(&addr("terraform_data.a[1]"), true, true));
    assert!(s.plans(&addr("terraform_data.a[0]"), true, true));
    let s = scope(&[], &["terraform_data.b"]);
    assert!(!s.plans(&addr("terraform_data.b"), false, true));
    assert!(s.plans(&addr("terraform_data.a[1]"), true, true));
    // d is configured but left out of the graph.
    assert!(!s.plans(&addr("terraform_data.d"), false, true));
    // An object only the state has is deleted unless excluded.
    assert!(s.plans(&addr("terraform_data.gone"), false, false));
}

#[test]
fn instances_of_a_named_resource_are_chosen_one_by_one() {
    let s = scope(&["terraform_data.a[1]"], &[]);
    assert!(s.plans(&addr("terraform_data.a[1]"), true, true));
    assert!(!s.plans(&addr("terraform_data.a[0]"), true, true));
    // A dependency of a target is planned whole.
    let s = scope(&["terraform_data.b"], &[]);
    assert!(s.plans(&addr("terraform_data.a[0]"), true, true));
    assert!(s.plans(&addr("terraform_data.a[5]"), true, true));
    assert!(!s.plans(&addr("terraform_data.c"), false, true));
}

#[test]
fn module_targets_hold_their_instances() {
    let m = |text: &str| Target::parse(text).expect("target");
    let inside = |module: &str| Address {
        id: ResourceAddr {
            module: ModulePath::parse(module).expect("module"),
            mode: strata_state::model::Mode::Managed,
            type_name: "terraform_data".into(),
            name: "x".into(),
        },
        key: None,
    };
    assert!(m("module.m").contains(&inside("module.m[1]")));
    assert!(m("module.m[1]").contains(&inside("module.m[1].module.n[\"k\"]")));
    assert!(!m("module.m[0]").contains(&inside("module.m[1]")));
    // Only the last step of a module target stands for any key.
    assert!(!m("module.m.module.n").contains(&inside("module.m[0].module.n")));
}

#[test]
fn a_destroy_takes_what_depends_on_a_target_and_keeps_what_an_exclusion_needs() {
    let g = graph();
    let s = scope(&["terraform_data.a[0]"], &[]);
    let d = s.destroying(&g);
    assert!(d.destroys(&addr("terraform_data.a[0]")));
    assert!(!d.destroys(&addr("terraform_data.a[1]")));
    assert!(d.destroys(&addr("terraform_data.b")));
    assert!(d.destroys(&addr("terraform_data.d")));
    assert!(!d.destroys(&addr("terraform_data.c")));
    let s = scope(&[], &["terraform_data.b"]);
    let d = s.destroying(&g);
    assert!(!d.destroys(&addr("terraform_data.b")));
    assert!(!d.destroys(&addr("terraform_data.a[0]")));
    assert!(d.destroys(&addr("terraform_data.d")));
    assert!(d.destroys(&addr("terraform_data.c")));
}

#[test]
fn addresses_are_refused_in_terraforms_words() {
    let why = |t: &str| Target::parse(t).expect_err(t);
    assert_eq!(
        why("foo"),
        "Resource specification must include a resource type and name."
    );
    assert_eq!(
        why("module.x.foo"),
        "Resource specification must include a resource type and name."
    );
    assert_eq!(
        why("data.x"),
        "Resource specification must include a resource type and name."
    );
    assert_eq!(
        why("terraform_data.a["),
        "Index brackets must contain either a literal number or a literal string."
    );
    assert_eq!(
        why("terraform_data.a.b"),
        "Resource instance key must be given in square brackets."
    );
    assert_eq!(
        Target::parse("terraform_data.a[\"k\"]"),
        Ok(Target::Instance(Address {
            id: addr("terraform_data.a").id,
            key: Some(InstanceKey::Str("k".into())),
        }))
    );
}
