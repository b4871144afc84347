//! Deciding what to do with one resource instance: comparing the prior
//! object with the driver's plan, under the schema's forces-replacement
//! attributes and the `lifecycle` settings.

use super::{Action, Reason};
use crate::lang::value::{Attrs, Value};
use crate::syntax::ast::{Expr, ExprKind};
use strata_provider::{AttrPath, Planned, ResourceSchema};

#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub action: Action,
    pub reason: Option<Reason>,
    pub replace_paths: Vec<AttrPath>,
}

fn attr<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.unmarked().entries().and_then(|m| m.get(name))
}

/// Equal once sensitive marks are set aside: marks change how a value is
/// shown, not what the object is.
pub fn same(a: &Value, b: &Value) -> bool {
    if !a.contains_sensitive() && !b.contains_sensitive() {
        return a.raw_equal(b);
    }
    a.clone()
        .unmark_deep()
        .0
        .raw_equal(&b.clone().unmark_deep().0)
}

pub fn decide(
    prior: Option<&Value>,
    config: &Value,
    planned: &Planned,
    schema: &ResourceSchema,
    create_before_destroy: bool,
    forced: Option<Reason>,
) -> Decision {
    let Some(prior) = prior else {
        return Decision {
            action: Action::Create,
            reason: None,
            replace_paths: Vec::new(),
        };
    };
    let mut replace_paths = planned.requires_replace.clone();
    for (name, s) in &schema.attributes {
        if !s.force_new {
            continue;
        }
        // An unset optional+computed attribute keeps what the driver chose.
        if s.computed && attr(config, name).is_none_or(Value::is_null) {
            continue;
        }
        // The planned value, not the configured one: a driver fills in its
        // defaults (a NAT gateway's `connectivity_type = "public"`), and
        // an unset argument equal to its default is no change.
        let want = attr(&planned.planned, name);
        let had = attr(prior, name);
        let null = |v: Option<&Value>| v.is_none_or(Value::is_null);
        let changed = match (want, had) {
            _ if null(want) && null(had) => false,
            (Some(w), Some(h)) => !w.is_wholly_known() || !same(w, h),
            _ => true,
        };
        let path = vec![name.clone()];
        if changed && !replace_paths.contains(&path) {
            replace_paths.push(path);
        }
    }
    replace_paths.sort();
    let replace = |reason| Decision {
        action: if create_before_destroy {
            Action::CreateThenDelete
        } else {
            Action::DeleteThenCreate
        },
        reason: Some(reason),
        replace_paths: replace_paths.clone(),
    };
    if let Some(reason) = forced {
        return replace(reason);
    }
    if !replace_paths.is_empty() {
        return replace(Reason::CannotUpdate);
    }
    Decision {
        action: if same(&planned.planned, prior) {
            Action::NoOp
        } else {
            Action::Update
        },
        reason: None,
        replace_paths: Vec::new(),
    }
}

/// One step of an attribute path in `ignore_changes`.
#[derive(Debug, Clone)]
pub enum Step {
    Attr(String),
    Key(String),
}

/// `input`, `tags["Name"]`, `a.b`: the path an `ignore_changes` entry names,
/// or `None` when it is not a static path.
pub fn path_of(e: &Expr) -> Option<Vec<Step>> {
    match &e.kind {
        ExprKind::Variable(n) => Some(vec![Step::Attr(n.clone())]),
        ExprKind::GetAttr(inner, a) => {
            let mut p = path_of(inner)?;
            p.push(Step::Attr(a.clone()));
            Some(p)
        }
        ExprKind::Index(inner, key) => {
            let mut p = path_of(inner)?;
            match &key.kind {
                ExprKind::Literal(v) => match v.unmarked() {
                    Value::String(s) => p.push(Step::Key(s.clone())),
                    Value::Number(n) => p.push(Step::Key(n.to_text())),
                    _ => return None,
                },
                _ => return None,
            }
            Some(p)
        }
        _ => None,
    }
}

/// `config` with the value at `path` taken from `prior`, so a difference
/// there never shows up in the plan.
pub fn keep_prior(config: Value, prior: &Value, path: &[Step]) -> Value {
    let Some((first, rest)) = path.split_first() else {
        return prior.clone();
    };
    let name = match first {
        Step::Attr(n) | Step::Key(n) => n,
    };
    let (config, marked) = config.unmark();
    let out = match config {
        Value::Object(mut m) => {
            let had = attr(prior, name).cloned();
            let cur = m.remove(name);
            match (cur, had) {
                (Some(c), Some(h)) => {
                    m.insert(name.clone(), keep_prior(c, &h, rest));
                }
                (Some(c), None) => {
                    m.insert(name.clone(), c);
                }
                _ => {}
            }
            Value::Object(m)
        }
        Value::Map(t, mut m) => {
            let had = attr(prior, name).cloned();
            match (m.remove(name), had) {
                (Some(c), Some(h)) => {
                    m.insert(name.clone(), keep_prior(c, &h, rest));
                }
                (None, Some(h)) => {
                    if rest.is_empty() {
                        m.insert(name.clone(), h);
                    }
                }
                (Some(_), None) if rest.is_empty() => {}
                (Some(c), None) => {
                    m.insert(name.clone(), c);
                }
                (None, None) => {}
            }
            Value::Map(t, m)
        }
        Value::List(t, mut vs) => {
            if let (Ok(i), Some(h)) = (
                name.parse::<usize>(),
                prior.unmarked().elements().map(<[Value]>::to_vec),
            ) {
                if let (Some(c), Some(hv)) = (vs.get(i).cloned(), h.get(i)) {
                    vs[i] = keep_prior(c, hv, rest);
                }
            }
            Value::List(t, vs)
        }
        other => other,
    };
    out.mark_if(marked)
}

/// `ignore_changes = all`: every argument keeps its prior value.
pub fn keep_all(config: Value, prior: &Value) -> Value {
    let (config, marked) = config.unmark();
    match (config, prior.unmarked().entries()) {
        (Value::Object(m), Some(p)) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let v = p.get(&k).cloned().unwrap_or(v);
                    (k, v)
                })
                .collect::<Attrs>(),
        )
        .mark_if(marked),
        (c, _) => c.mark_if(marked),
    }
}

/// `v` with the sensitive marks it must carry: those of the configuration
/// it was planned from (a driver may drop them) and the attributes the
/// schema calls sensitive.
pub fn with_marks(v: Value, config: Option<&Value>, schema: &ResourceSchema) -> Value {
    use crate::lang::json::{apply_mark_paths, mark_paths};
    let v = match config {
        Some(c) => apply_mark_paths(v, &mark_paths(c)),
        None => v,
    };
    let (v, marked) = v.unmark();
    let v = match v {
        Value::Object(mut m) => {
            for (k, a) in &schema.attributes {
                if a.sensitive {
                    if let Some(x) = m.remove(k) {
                        m.insert(k.clone(), x.mark());
                    }
                }
            }
            Value::Object(m)
        }
        v => v,
    };
    v.mark_if(marked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::types::Type;
    use strata_provider::AttributeSchema;

    fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
        Value::Object(Attrs::from(pairs))
    }

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    /// `name` replaces on change; `size` updates in place; `id` is the
    /// driver's.
    fn schema() -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "name",
                AttributeSchema::required(Type::String, "").force_new(),
            ),
            ("size", AttributeSchema::optional(Type::String, "")),
            ("id", AttributeSchema::computed(Type::String, "")),
        ])
    }

    struct Case {
        prior: Option<Value>,
        planned: Value,
        requires_replace: Vec<AttrPath>,
        cbd: bool,
        forced: Option<Reason>,
        action: Action,
        reason: Option<Reason>,
    }

    fn case(prior: Option<Value>, planned: Value, action: Action, reason: Option<Reason>) -> Case {
        Case {
            prior,
            planned,
            requires_replace: Vec::new(),
            cbd: false,
            forced: None,
            action,
            reason,
        }
    }

    #[test]
    fn actions_and_reasons() {
        let was = || obj([("name", s("a")), ("size", s("s")), ("id", s("i-1"))]);
        let with =
            |name: &str, size: &str| obj([("name", s(name)), ("size", s(size)), ("id", s("i-1"))]);
        let unknown_name = obj([
            ("name", Value::Unknown(Type::String)),
            ("size", s("s")),
            ("id", s("i-1")),
        ]);
        let cases = [
            case(None, with("a", "s"), Action::Create, None),
            case(Some(was()), with("a", "s"), Action::NoOp, None),
            case(Some(was()), with("a", "m"), Action::Update, None),
            case(
                Some(was()),
                with("b", "s"),
                Action::DeleteThenCreate,
                Some(Reason::CannotUpdate),
            ),
            case(
                Some(was()),
                unknown_name,
                Action::DeleteThenCreate,
                Some(Reason::CannotUpdate),
            ),
            Case {
                cbd: true,
                ..case(
                    Some(was()),
                    with("b", "s"),
                    Action::CreateThenDelete,
                    Some(Reason::CannotUpdate),
                )
            },
            Case {
                forced: Some(Reason::Tainted),
                ..case(
                    Some(was()),
                    with("a", "s"),
                    Action::DeleteThenCreate,
                    Some(Reason::Tainted),
                )
            },
            Case {
                forced: Some(Reason::ReplaceTriggered),
                ..case(
                    Some(was()),
                    with("a", "s"),
                    Action::DeleteThenCreate,
                    Some(Reason::ReplaceTriggered),
                )
            },
            // -replace: even a changed forced attribute says "as requested".
            Case {
                forced: Some(Reason::ReplaceByRequest),
                ..case(
                    Some(was()),
                    with("b", "s"),
                    Action::DeleteThenCreate,
                    Some(Reason::ReplaceByRequest),
                )
            },
            // The driver's own replace paths count as a forced attribute's.
            Case {
                requires_replace: vec![vec!["size".to_string()]],
                ..case(
                    Some(was()),
                    with("a", "m"),
                    Action::DeleteThenCreate,
                    Some(Reason::CannotUpdate),
                )
            },
            // A sensitive mark is not a change.
            case(
                Some(was()),
                obj([("name", s("a")), ("size", s("s").mark()), ("id", s("i-1"))]),
                Action::NoOp,
                None,
            ),
        ];
        for (i, c) in cases.into_iter().enumerate() {
            let planned = Planned {
                planned: c.planned.clone(),
                requires_replace: c.requires_replace,
                kept: Default::default(),
            };
            let d = decide(
                c.prior.as_ref(),
                &c.planned,
                &planned,
                &schema(),
                c.cbd,
                c.forced,
            );
            assert_eq!((d.action, d.reason), (c.action, c.reason), "case {i}");
        }
    }

    #[test]
    fn a_forced_attribute_unset_and_computed_keeps_what_the_driver_chose() {
        let schema = ResourceSchema::of_attributes(vec![(
            "zone",
            AttributeSchema::optional(Type::String, "")
                .and_computed()
                .force_new(),
        )]);
        let prior = obj([("zone", s("z-1"))]);
        let config = obj([("zone", Value::Null(Type::String))]);
        let planned = Planned {
            planned: obj([("zone", s("z-2"))]),
            requires_replace: Vec::new(),
            kept: Default::default(),
        };
        let d = decide(Some(&prior), &config, &planned, &schema, false, None);
        assert_eq!(d.action, Action::Update);
        assert!(d.replace_paths.is_empty());
    }
}
