//! Expression evaluation with Terraform's semantics: unknown values
//! propagate, the sensitive mark follows values, operators convert their
//! operands, and every error points at the expression that caused it.

mod ops;
#[cfg(test)]
mod tests;

use crate::diag::{Diag, Span};
use crate::funcs::{self, CallCtx};
use crate::lang::convert::{convert, unify};
use crate::lang::number::Number;
use crate::lang::types::Type;
use crate::lang::value::{Attrs, Value};
use crate::syntax::ast::{ExprKind, ForExpr, ObjectKey, TemplatePart};
use crate::syntax::Expr;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Resolves the root names an expression may reference.
pub trait Scope {
    /// Resolves `name` (or `name.attr` when `attr` is given). Returns the value
    /// and whether `attr` was consumed. Unknown names are errors that say what
    /// was meant, when there is a close match.
    fn resolve(&self, name: &str, attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag>;

    /// Whether a reference (`var.token`, `local.t`, `module.m.out`) is an
    /// ephemeral value, which `ephemeralasnull` turns into null.
    fn is_ephemeral(&self, _root: &str, _attrs: &[&str]) -> bool {
        false
    }

    /// Whether `provider::NAME::…` functions may be called: in a module,
    /// only when its `required_providers` declares NAME, as in Terraform.
    fn declares_provider(&self, _local_name: &str) -> bool {
        true
    }

    /// Whether `timestamp()` and its kind are called here or known after
    /// apply (see [`funcs::Impure`]).
    fn impure(&self) -> funcs::Impure {
        funcs::Impure::Called
    }

    /// Calls the function `function` of the provider the local name
    /// `provider` names, with `args` (unmarked): `None` when that provider
    /// offers no such function (or none is running here).
    fn provider_function(
        &self,
        _provider: &str,
        _function: &str,
        _args: Vec<Value>,
    ) -> Option<Result<Value, CallFailure>> {
        None
    }
}

/// A provider function's refusal: what it says, and the argument at fault
/// when it names one.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFailure {
    pub text: String,
    pub argument: Option<usize>,
}

/// A scope with nothing in it: `terraform console` in an empty directory.
pub struct EmptyScope;

impl Scope for EmptyScope {
    fn resolve(&self, name: &str, attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag> {
        Err(unknown_root(name, attr, &[]).at(span))
    }
}

/// The error for a name no scope knows, with a suggestion when one is close.
pub fn unknown_root(name: &str, attr: Option<&str>, known: &[&str]) -> Diag {
    match (name, attr) {
        ("var", Some(a)) => Diag::new(
            "strata::eval::undeclared_variable",
            "Reference to undeclared input variable",
            format!(
                "An input variable with the name {a:?} has not been declared.{}",
                did_you_mean(a, known)
            ),
        ),
        ("local", Some(a)) => Diag::new(
            "strata::eval::undeclared_local",
            "Reference to undeclared local value",
            format!(
                "A local value with the name {a:?} has not been declared.{}",
                did_you_mean(a, known)
            ),
        ),
        (_, None) => Diag::new(
            "strata::eval::invalid_reference",
            "Invalid reference",
            format!(
                "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.{}",
                did_you_mean(name, known)
            ),
        ),
        _ => Diag::new(
            "strata::eval::unknown_reference",
            "Unknown variable",
            format!(
                "There is no variable named {name:?}.{}",
                did_you_mean(name, known)
            ),
        ),
    }
}

/// " Did you mean \"x\"?" when a candidate is close enough, else "".
pub fn did_you_mean(name: &str, candidates: &[&str]) -> String {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!(" Did you mean {c:?}?"))
        .unwrap_or_default()
}

pub struct Evaluator<'a> {
    scope: &'a dyn Scope,
    /// Directory that relative paths in `file()` and friends resolve from.
    pub base_dir: PathBuf,
    /// for-expression and template-for variables, innermost last.
    locals: Vec<(String, Value)>,
    splat_items: Vec<Value>,
}

pub type EvalResult = Result<Value, Diag>;

impl Evaluator<'_> {
    /// Whether anything `body` says (its nested blocks' too) is derived
    /// from an ephemeral value, outside `ephemeralasnull`: what a
    /// provisioner then says is not shown.
    pub fn derives_ephemeral(&self, body: &crate::syntax::Body) -> bool {
        let mut found = false;
        for a in &body.attrs {
            a.expr
                .visit_references_outside("ephemeralasnull", &mut |root, attrs, _| {
                    found |= self.scope.is_ephemeral(root, attrs);
                });
        }
        found || body.blocks.iter().any(|b| self.derives_ephemeral(&b.body))
    }
}

/// `v`, just built by a `what` at `span`, counted against the run's
/// budget ([`crate::limits::MAX_BUILT_BYTES`]): past it, an error there
/// rather than a process out of memory holding the state's lock.
fn built(v: Value, what: &str, span: Span) -> EvalResult {
    match crate::limits::charge(&v) {
        Ok(()) => Ok(v),
        Err(why) => Err(diag(
            "strata::eval::too_large",
            "Too much built",
            format!("This {what} cannot be made: {why}."),
            span,
        )),
    }
}

fn diag(code: &'static str, summary: &str, detail: impl Into<String>, span: Span) -> Diag {
    Diag::new(code, summary, detail).at(span)
}

impl<'a> Evaluator<'a> {
    pub fn new(scope: &'a dyn Scope, base_dir: PathBuf) -> Evaluator<'a> {
        Evaluator {
            scope,
            base_dir,
            locals: Vec::new(),
            splat_items: Vec::new(),
        }
    }

    /// Binds `name` for the expressions evaluated until [`Self::unbind`]:
    /// the iterator of a `dynamic` block.
    pub fn bind(&mut self, name: &str, value: Value) {
        self.locals.push((name.to_string(), value));
    }

    pub fn unbind(&mut self) {
        self.locals.pop();
    }

    pub fn eval(&mut self, e: &Expr) -> EvalResult {
        // Expressions nest up to `syntax::MAX_NESTING` deep, and this
        // recursion follows them: more stack when it runs short.
        stacker::maybe_grow(crate::par::RED_ZONE, crate::par::GROW, || self.eval_kind(e))
    }

    fn eval_kind(&mut self, e: &Expr) -> EvalResult {
        match &e.kind {
            ExprKind::Literal(v) => Ok((**v).clone()),
            ExprKind::Parens(inner) => self.eval(inner),
            ExprKind::Template(parts) => self.template(parts, e.span),
            ExprKind::Tuple(items) => {
                let v = Value::Tuple(
                    items
                        .iter()
                        .map(|i| self.eval(i))
                        .collect::<Result<_, _>>()?,
                );
                built(v, "value", e.span)
            }
            ExprKind::Object(items) => built(self.object(items)?, "value", e.span),
            ExprKind::Variable(name) => self.variable(name, None, e.span).map(|(v, _)| v),
            ExprKind::GetAttr(inner, attr) => {
                if let ExprKind::Variable(name) = &inner.kind {
                    let (v, consumed) = self.variable(name, Some(attr), e.span)?;
                    if consumed {
                        return Ok(v);
                    }
                    return ops::get_attr(v, attr, e.span);
                }
                let v = self.eval(inner)?;
                ops::get_attr(v, attr, e.span)
            }
            ExprKind::Index(coll, key) => {
                let c = self.eval(coll)?;
                let k = self.eval(key)?;
                ops::index(c, k, e.span)
            }
            ExprKind::Splat(source, each) => self.splat(source, each),
            ExprKind::SplatItem => self.splat_items.last().cloned().ok_or_else(|| {
                diag(
                    "strata::eval::splat",
                    "Invalid splat",
                    "A splat item appears outside a splat expression.",
                    e.span,
                )
            }),
            ExprKind::Call {
                name,
                args,
                expand_final,
            } => self.call(name, args, *expand_final, e.span),
            ExprKind::Unary(op, inner) => {
                let v = self.eval(inner)?;
                ops::unary(*op, v, inner.span)
            }
            ExprKind::Binary(chain) => self.chain(chain),
            ExprKind::Conditional(c, t, f) => self.conditional(c, t, f),
            ExprKind::For(fe) => built(self.for_expr(fe, e.span)?, "'for' expression", e.span),
        }
    }

    /// A chain of one precedence level, folded left to right.
    fn chain(&mut self, chain: &crate::syntax::ast::Chain) -> EvalResult {
        let mut acc = self.eval(&chain.first)?;
        let mut left = chain.first.span;
        for o in &chain.rest {
            acc = self.operation(acc, left, o)?;
            left = left.to(o.rhs.span);
        }
        Ok(acc)
    }

    fn operation(
        &mut self,
        lv: Value,
        left: Span,
        o: &crate::syntax::ast::Operation,
    ) -> EvalResult {
        use crate::syntax::ast::BinaryOp;
        // Terraform 1.12's rule (hashicorp/hcl#713): when the left side of
        // && or || decides the result, an error evaluating the right side
        // is dropped, as a conditional drops its other branch's. A right
        // side that evaluates must still be a boolean, as in 1.11.
        if let (BinaryOp::And | BinaryOp::Or, Some(b)) = (o.op, lv.as_bool()) {
            if b != matches!(o.op, BinaryOp::And) {
                let marked = match self.eval(&o.rhs) {
                    Ok(rv) => {
                        ops::check_logical_operand(&rv, o.rhs.span, false)?;
                        rv.is_sensitive()
                    }
                    Err(_) => false,
                };
                return Ok(Value::Bool(b).mark_if(lv.is_sensitive() || marked));
            }
        }
        let rv = self.eval(&o.rhs)?;
        // The rule holds both ways round: `unknown && false` is false and
        // `unknown || true` is true, once the unknown side is a boolean.
        if let (BinaryOp::And | BinaryOp::Or, Some(b)) = (o.op, rv.as_bool()) {
            let decides = b != matches!(o.op, BinaryOp::And);
            if decides && !lv.is_known() {
                ops::check_logical_operand(&lv, left, true)?;
                let marked = lv.is_sensitive() || rv.is_sensitive();
                return Ok(Value::Bool(b).mark_if(marked));
            }
        }
        ops::binary(o.op, lv, rv, left, o.rhs.span)
    }

    fn variable(&self, name: &str, attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag> {
        if attr.is_none() || self.locals.iter().any(|(n, _)| n == name) {
            if let Some((_, v)) = self.locals.iter().rev().find(|(n, _)| n == name) {
                return Ok((v.clone(), false));
            }
        }
        self.scope.resolve(name, attr, span)
    }

    fn object(&mut self, items: &[(ObjectKey, Expr)]) -> EvalResult {
        let mut out = Attrs::new();
        let mut marked = false;
        let mut unknown_key = false;
        for (k, v) in items {
            let key = match k {
                ObjectKey::Name(n) => n.clone(),
                ObjectKey::Expr(ke) => {
                    let kv = self.eval(ke)?;
                    if kv.is_null() {
                        return Err(diag(
                            "strata::eval::object_key",
                            "Invalid object key",
                            "Can't use a null value as a key.",
                            ke.span,
                        ));
                    }
                    let (kv, m) = kv.unmark();
                    marked |= m;
                    if !kv.is_known() {
                        unknown_key = true;
                        self.eval(v)?;
                        continue;
                    }
                    match convert(&kv, &Type::String) {
                        Ok(Value::String(s)) => s,
                        _ => {
                            return Err(diag(
                                "strata::eval::object_key",
                                "Incorrect key type",
                                "Can't use this value as a key: string required.",
                                ke.span,
                            ))
                        }
                    }
                }
            };
            let val = self.eval(v)?;
            out.insert(key, val);
        }
        if unknown_key {
            return Ok(Value::unknown().mark_if(marked));
        }
        Ok(Value::Object(out).mark_if(marked))
    }

    fn template(&mut self, parts: &[TemplatePart], span: Span) -> EvalResult {
        // "${x}" alone is x itself, not x converted to a string.
        if let [TemplatePart::Interp(e)] = parts {
            return self.eval(e);
        }
        let mut out = String::new();
        let mut known = true;
        let mut marked = false;
        self.template_into(parts, &mut out, &mut known, &mut marked)?;
        let v = if known {
            Value::String(out)
        } else {
            Value::Unknown(Type::String)
        };
        let v = built(v, "template", span)?;
        Ok(v.mark_if(marked))
    }

    fn template_into(
        &mut self,
        parts: &[TemplatePart],
        out: &mut String,
        known: &mut bool,
        marked: &mut bool,
    ) -> Result<(), Diag> {
        for p in parts {
            match p {
                TemplatePart::Literal(s) => out.push_str(s),
                TemplatePart::Interp(e) => self.interpolated(e, out, known, marked)?,
                TemplatePart::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let Some(b) = self.directive_condition(cond, known, marked)? else {
                        continue;
                    };
                    self.template_into(if b { then } else { otherwise }, out, known, marked)?;
                }
                TemplatePart::For {
                    key_var,
                    value_var,
                    collection,
                    body,
                } => {
                    let c = self.eval(collection)?;
                    let (c, m) = c.unmark();
                    *marked |= m;
                    if !c.is_known() {
                        *known = false;
                        continue;
                    }
                    let pairs = iteration_pairs(&c).ok_or_else(|| {
                        diag(
                            "strata::eval::template",
                            "Invalid template for directive",
                            format!("Cannot iterate over {}.", c.ty().friendly_name()),
                            collection.span,
                        )
                    })?;
                    for (k, v) in pairs {
                        let n = self.locals.len();
                        if let Some(kv) = key_var {
                            self.locals.push((kv.clone(), k));
                        }
                        self.locals.push((value_var.clone(), v));
                        let r = self.template_into(body, out, known, marked);
                        self.locals.truncate(n);
                        r?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `${e}` in a template: its value as a string, or (unknown) nothing
    /// yet; null and values that are no string are errors.
    fn interpolated(
        &mut self,
        e: &Expr,
        out: &mut String,
        known: &mut bool,
        marked: &mut bool,
    ) -> Result<(), Diag> {
        let v = self.eval(e)?;
        let (v, m) = v.unmark();
        *marked |= m;
        if v.is_null() {
            return Err(diag(
                "strata::eval::template",
                "Invalid template interpolation value",
                "The expression result is null. Cannot include a null value in a string template.",
                e.span,
            ));
        }
        if !v.is_known() {
            *known = false;
            return Ok(());
        }
        match convert(&v, &Type::String) {
            Ok(Value::String(s)) => {
                out.push_str(&s);
                let limit = crate::limits::MAX_STRING_BYTES;
                match crate::limits::over(out.len(), limit, "bytes") {
                    Some(why) => Err(diag(
                        "strata::eval::too_large",
                        "String too large",
                        format!("This template cannot be made: {why}."),
                        e.span,
                    )),
                    None => Ok(()),
                }
            }
            Ok(Value::Unknown(_)) => {
                *known = false;
                Ok(())
            }
            _ => Err(diag(
                "strata::eval::template",
                "Invalid template interpolation value",
                format!(
                    "Cannot include the given value in a string template: string required, but have {}.",
                    v.ty().friendly_name()
                ),
                e.span,
            )),
        }
    }

    /// `%{if cond}`'s condition: a bool, or `None` when not known yet.
    fn directive_condition(
        &mut self,
        cond: &Expr,
        known: &mut bool,
        marked: &mut bool,
    ) -> Result<Option<bool>, Diag> {
        let c = self.eval(cond)?;
        let (c, m) = c.unmark();
        *marked |= m;
        let invalid = |why: &str| {
            diag(
                "strata::eval::template",
                "Invalid template if directive",
                why,
                cond.span,
            )
        };
        if c.is_null() {
            return Err(invalid("The condition is null."));
        }
        if !c.is_known() {
            *known = false;
            return Ok(None);
        }
        match convert(&c, &Type::Bool) {
            Ok(Value::Bool(b)) => Ok(Some(b)),
            _ => Err(invalid("The condition must be a bool.")),
        }
    }

    fn splat(&mut self, source: &Expr, each: &Expr) -> EvalResult {
        let src = self.eval(source)?;
        let (src, marked) = src.unmark();
        let ty = src.ty();
        let is_seq = matches!(ty, Type::List(_) | Type::Set(_) | Type::Tuple(_));
        if src.is_null() {
            if is_seq {
                return Err(diag(
                    "strata::eval::splat",
                    "Splat of null value",
                    "Splat expressions (with the * symbol) cannot be applied to null sequences.",
                    source.span,
                ));
            }
            return Ok(Value::Tuple(vec![]).mark_if(marked));
        }
        if !src.is_known() {
            return Ok(Value::unknown().mark_if(marked));
        }
        let items: Vec<Value> = match &src {
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => vs.clone(),
            other => vec![other.clone()],
        };
        let mut out = Vec::with_capacity(items.len());
        for it in items {
            self.splat_items.push(it);
            let r = self.eval(each);
            self.splat_items.pop();
            out.push(r?);
        }
        let v = match ty {
            Type::List(_) | Type::Set(_) => {
                let tys: Vec<Type> = out.iter().map(Value::ty).collect();
                let et = unify(&tys).unwrap_or(Type::Dynamic);
                let vals = out
                    .iter()
                    .map(|v| convert(v, &et).unwrap_or_else(|_| v.clone()))
                    .collect();
                Value::List(et, vals)
            }
            _ => Value::Tuple(out),
        };
        Ok(v.mark_if(marked))
    }

    fn conditional(&mut self, c: &Expr, t: &Expr, f: &Expr) -> EvalResult {
        let cond = self.eval(c)?;
        let tr = self.eval(t);
        let fr = self.eval(f);
        let ty_of = |r: &EvalResult| r.as_ref().map(Value::ty).unwrap_or(Type::Dynamic);
        let is_dyn_null = |r: &EvalResult| matches!(r, Ok(Value::Null(Type::Dynamic)));
        let (tt, ft) = (ty_of(&tr), ty_of(&fr));
        let result_ty = if is_dyn_null(&tr) {
            Some(ft.clone())
        } else if is_dyn_null(&fr) {
            Some(tt.clone())
        } else {
            unify(&[tt.clone(), ft.clone()])
        };
        let Some(result_ty) = result_ty else {
            return Err(diag(
                "strata::eval::conditional",
                "Inconsistent conditional result types",
                format!(
                    "The true and false result expressions must have consistent types. The 'true' value is {}, but the 'false' value is {}.",
                    tt.friendly_name(),
                    ft.friendly_name()
                ),
                t.span.to(f.span),
            ));
        };
        let (cond, marked) = cond.unmark();
        if cond.is_null() {
            return Err(diag(
                "strata::eval::conditional",
                "Null condition",
                "The condition value is null. Conditions must either be true or false.",
                c.span,
            ));
        }
        if !cond.is_known() {
            // Whichever way it goes, two nulls give null: known already,
            // as HCL has it (Terraform plans such an output as null).
            let both_null = matches!((&tr, &fr), (Ok(a), Ok(b)) if a.unmarked().is_null() && b.unmarked().is_null());
            if both_null {
                return Ok(Value::Null(result_ty).mark_if(marked));
            }
            return Ok(Value::Unknown(result_ty).mark_if(marked));
        }
        let b = match convert(&cond, &Type::Bool) {
            Ok(Value::Bool(b)) => b,
            _ => {
                return Err(diag(
                    "strata::eval::conditional",
                    "Incorrect condition type",
                    "The condition expression must be of type bool.",
                    c.span,
                ))
            }
        };
        let (chosen, span) = if b { (tr, t.span) } else { (fr, f.span) };
        let v = chosen?;
        let v = convert(&v, &result_ty).map_err(|e| {
            diag(
                "strata::eval::conditional",
                "Inconsistent conditional result types",
                format!("The result value could not be converted: {e}."),
                span,
            )
        })?;
        Ok(v.mark_if(marked))
    }

    fn for_expr(&mut self, fe: &ForExpr, span: Span) -> EvalResult {
        let coll = self.eval(&fe.collection)?;
        let (coll, marked) = coll.unmark();
        if coll.is_null() {
            return Err(diag(
                "strata::eval::for",
                "Iteration over null value",
                "A null value cannot be used as the collection in a 'for' expression.",
                fe.collection.span,
            ));
        }
        if !coll.is_known() {
            return Ok(Value::unknown().mark_if(marked));
        }
        let pairs = iteration_pairs(&coll).ok_or_else(|| {
            diag(
                "strata::eval::for",
                "Iteration over non-iterable value",
                format!(
                    "A value of type {} cannot be used as the collection in a 'for' expression.",
                    coll.ty().friendly_name()
                ),
                fe.collection.span,
            )
        })?;
        let mut tuple = Vec::new();
        let mut object = Attrs::new();
        let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut unknown = false;
        let mut marked = marked;
        for (k, v) in pairs {
            let n = self.locals.len();
            if let Some(kv) = &fe.key_var {
                self.locals.push((kv.clone(), k));
            }
            self.locals.push((fe.value_var.clone(), v));
            let r = self.for_item(fe, &mut unknown, &mut marked);
            self.locals.truncate(n);
            let Some((key, val)) = r? else { continue };
            match key {
                None => tuple.push(val),
                Some(key) if fe.grouping => groups.entry(key).or_default().push(val),
                Some(key) => {
                    if object.contains_key(&key) {
                        return Err(diag(
                            "strata::eval::for",
                            "Duplicate object key",
                            format!(
                                "Two different items produced the key {key:?} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key."
                            ),
                            span,
                        ));
                    }
                    object.insert(key, val);
                }
            }
        }
        if unknown {
            return Ok(Value::unknown().mark_if(marked));
        }
        let v = if fe.key.is_none() {
            Value::Tuple(tuple)
        } else if fe.grouping {
            Value::Object(
                groups
                    .into_iter()
                    .map(|(k, vs)| (k, Value::Tuple(vs)))
                    .collect(),
            )
        } else {
            Value::Object(object)
        };
        Ok(v.mark_if(marked))
    }

    /// One iteration: `None` when the condition filtered the item out.
    fn for_item(
        &mut self,
        fe: &ForExpr,
        unknown: &mut bool,
        marked: &mut bool,
    ) -> Result<Option<ForItem>, Diag> {
        if let Some(cond) = &fe.cond {
            let c = self.eval(cond)?;
            let (c, m) = c.unmark();
            *marked |= m;
            if c.is_null() {
                return Err(diag(
                    "strata::eval::for",
                    "Condition is null",
                    "The value of the 'if' clause must not be null.",
                    cond.span,
                ));
            }
            if !c.is_known() {
                *unknown = true;
                return Ok(None);
            }
            match convert(&c, &Type::Bool) {
                Ok(Value::Bool(true)) => {}
                Ok(Value::Bool(false)) => return Ok(None),
                _ => {
                    return Err(diag(
                        "strata::eval::for",
                        "Invalid 'for' condition",
                        "The 'if' clause value is invalid: bool required.",
                        cond.span,
                    ))
                }
            }
        }
        let key = match &fe.key {
            None => None,
            Some(ke) => {
                let k = self.eval(ke)?;
                let (k, m) = k.unmark();
                *marked |= m;
                if k.is_null() {
                    return Err(diag(
                        "strata::eval::for",
                        "Invalid object key",
                        "Key expression in 'for' expression must not produce a null value.",
                        ke.span,
                    ));
                }
                if !k.is_known() {
                    *unknown = true;
                    return Ok(None);
                }
                match convert(&k, &Type::String) {
                    Ok(Value::String(s)) => Some(s),
                    _ => {
                        return Err(diag(
                            "strata::eval::for",
                            "Invalid object key",
                            "The key expression produced an invalid result: string required.",
                            ke.span,
                        ))
                    }
                }
            }
        };
        let val = self.eval(&fe.value)?;
        Ok(Some((key, val)))
    }

    fn call(&mut self, name: &str, args: &[Expr], expand_final: bool, span: Span) -> EvalResult {
        let short = name.strip_prefix("core::").unwrap_or(name);
        match short {
            "try" => return self.call_try(args, span),
            "can" => return self.call_can(args, span),
            "ephemeralasnull" if args.len() == 1 => {
                // Ephemeral is a property of where a value comes from
                // (config::ephemeral), so it is asked of the references.
                let mut ephemeral = false;
                args[0].visit_references(&mut |root, attrs, _| {
                    ephemeral |= self.scope.is_ephemeral(root, attrs);
                });
                let v = self.eval(&args[0])?;
                return Ok(if ephemeral { Value::Null(v.ty()) } else { v });
            }
            _ => {}
        }
        let offered = short
            .strip_prefix("provider::")
            .and_then(|r| r.split_once("::"));
        if let Some((provider, _)) = offered {
            if !self.scope.declares_provider(provider) {
                return Err(diag(
                    "strata::eval::unknown_function",
                    "Unknown provider function",
                    format!("There is no function named {name:?}. Ensure that provider name {provider:?} is declared in this module's required_providers block, and that this provider offers the function."),
                    span,
                ));
            }
        }
        let Some(def) = funcs::lookup(short) else {
            if let Some((provider, function)) = offered {
                return match self.arguments(args, expand_final, span)? {
                    Ok(values) => {
                        self.call_provider(name, (provider, function), values, (args, span))
                    }
                    Err(unknown) => Ok(unknown),
                };
            }
            return Err(diag(
                "strata::eval::unknown_function",
                "Call to unknown function",
                format!(
                    "There is no function named {name:?}.{}",
                    did_you_mean(short, &funcs::names())
                ),
                span,
            ));
        };
        let values = match self.arguments(args, expand_final, span)? {
            Ok(values) => values,
            Err(unknown) => return Ok(unknown),
        };
        let arg_spans: Vec<Span> = args.iter().map(|a| a.span).collect();
        let mut ctx = CallCtx {
            base_dir: &self.base_dir,
            eval: &Nested,
            impure: self.scope.impure(),
        };
        funcs::call(def, values, &mut ctx).map_err(|e| e.into_diag(short, span, &arg_spans))
    }

    /// A call's arguments, the last expanded when written `f(x...)`; an
    /// unknown expanding argument makes the call's result unknown
    /// (`Err`).
    fn arguments(
        &mut self,
        args: &[Expr],
        expand_final: bool,
        span: Span,
    ) -> Result<Result<Vec<Value>, Value>, Diag> {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(a)?);
        }
        if !expand_final {
            return Ok(Ok(values));
        }
        let last = values.pop().ok_or_else(|| {
            diag(
                "strata::eval::call",
                "Invalid expanding argument value",
                "The expansion symbol ... needs an argument to expand.",
                span,
            )
        })?;
        let (last, m) = last.unmark();
        if !last.is_known() {
            return Ok(Err(Value::unknown().mark_if(m)));
        }
        match last.elements() {
            Some(vs) if !last.is_null() => values.extend(vs.iter().map(|v| v.clone().mark_if(m))),
            _ => return Err(diag(
                "strata::eval::call",
                "Invalid expanding argument value",
                "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                args.last().map_or(span, |a| a.span),
            )),
        }
        Ok(Ok(values))
    }

    /// A provider-defined function (`provider::NAME::FUNCTION`), called
    /// through the scope with the arguments unmarked; the result carries
    /// their sensitivity.
    fn call_provider(
        &mut self,
        name: &str,
        (provider, function): (&str, &str),
        values: Vec<Value>,
        (args, span): (&[Expr], Span),
    ) -> EvalResult {
        let mut sensitive = false;
        let plain: Vec<Value> = values
            .into_iter()
            .map(|v| {
                let (v, marked) = v.unmark_deep();
                sensitive |= marked;
                v
            })
            .collect();
        match self.scope.provider_function(provider, function, plain) {
            None => Err(diag(
                "strata::eval::unknown_function",
                "Call to unknown function",
                format!("There is no function named {name:?}: the provider {provider:?} offers no function {function:?}."),
                span,
            )),
            Some(Ok(v)) => Ok(v.mark_if(sensitive)),
            Some(Err(f)) => {
                let at = f.argument.and_then(|i| args.get(i)).map_or(span, |a| a.span);
                let summary = match f.argument {
                    Some(_) => "Invalid function argument",
                    None => "Error in function call",
                };
                Err(diag(
                    "strata::eval::call",
                    summary,
                    format!("Call to function {name:?} failed: {}.", f.text.trim_end_matches('.')),
                    at,
                ))
            }
        }
    }

    fn call_try(&mut self, args: &[Expr], span: Span) -> EvalResult {
        if args.is_empty() {
            return Err(diag(
                "strata::eval::call",
                "Not enough function arguments",
                "Function \"try\" expects at least one argument.",
                span,
            ));
        }
        for a in args {
            match self.eval(a) {
                Ok(v) if !v.is_wholly_known() => return Ok(Value::unknown()),
                Ok(v) => return Ok(v),
                // Terraform checks references before evaluating, so a
                // reference to something undeclared is never "tried".
                Err(d) if is_static_reference_error(&d) => return Err(d),
                Err(_) => {}
            }
        }
        Err(diag(
            "strata::eval::call",
            "Error in function call",
            "Call to function \"try\" failed: no expression succeeded.",
            span,
        ))
    }

    fn call_can(&mut self, args: &[Expr], span: Span) -> EvalResult {
        if args.len() != 1 {
            return Err(diag(
                "strata::eval::call",
                "Wrong number of function arguments",
                "Function \"can\" expects exactly one argument.",
                span,
            ));
        }
        match self.eval(&args[0]) {
            Ok(v) if !v.is_wholly_known() => Ok(Value::Unknown(Type::Bool)),
            Ok(_) => Ok(Value::Bool(true)),
            Err(d) if is_static_reference_error(&d) => Err(d),
            Err(_) => Ok(Value::Bool(false)),
        }
    }
}

/// Errors Terraform finds before evaluation (references to things that are
/// not declared), which `try` and `can` therefore do not catch.
fn is_static_reference_error(d: &Diag) -> bool {
    matches!(
        d.code,
        "strata::eval::unknown_reference"
            | "strata::eval::invalid_reference"
            | "strata::eval::undeclared_variable"
            | "strata::eval::undeclared_local"
            | "strata::eval::undeclared_resource"
            | "strata::eval::undeclared_module"
            | "strata::eval::unknown_function"
            | "strata::eval::count"
            | "strata::eval::each"
    )
}

/// One for-expression result: the key (object results only) and the value.
type ForItem = (Option<String>, Value);

/// (key, value) pairs a for-expression iterates: index or key, and element.
pub fn iteration_pairs(v: &Value) -> Option<Vec<(Value, Value)>> {
    match v.unmarked() {
        Value::List(_, vs) | Value::Tuple(vs) => Some(
            vs.iter()
                .enumerate()
                .map(|(i, v)| (Value::Number(Number::from_i64(i as i64)), v.clone()))
                .collect(),
        ),
        Value::Set(_, vs) => Some(vs.iter().map(|v| (v.clone(), v.clone())).collect()),
        Value::Map(_, m) | Value::Object(m) => Some(
            m.iter()
                .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                .collect(),
        ),
        _ => None,
    }
}

/// Names bound to values: the scope of `templatefile` and `templatestring`.
pub struct MapScope<'a>(pub &'a Attrs);

impl Scope for MapScope<'_> {
    fn resolve(&self, name: &str, _attr: Option<&str>, span: Span) -> Result<(Value, bool), Diag> {
        match self.0.get(name) {
            Some(v) => Ok((v.clone(), false)),
            None => {
                let known: Vec<&str> = self.0.keys().map(String::as_str).collect();
                Err(unknown_root(name, None, &known).at(span))
            }
        }
    }
}

/// The evaluator as functions see it: what they evaluate starts afresh,
/// seeing only what they pass (a template's variables, nothing at all).
struct Nested;

impl funcs::Evaluate for Nested {
    fn template(&self, text: &str, vars: &Attrs, base_dir: &std::path::Path) -> EvalResult {
        render_template(text, vars, base_dir)
    }

    fn constant(&self, expr: &Expr) -> EvalResult {
        Evaluator::new(&EmptyScope, std::path::PathBuf::new()).eval(expr)
    }
}

/// Renders a template text with the given variables.
pub fn render_template(text: &str, vars: &Attrs, base_dir: &std::path::Path) -> EvalResult {
    let file = crate::diag::FileId(u32::MAX);
    let expr = crate::syntax::parse_template(file, text)?;
    let scope = MapScope(vars);
    let mut ev = Evaluator::new(&scope, base_dir.to_path_buf());
    let v = ev.eval(&expr)?;
    convert(&v, &Type::String).map_err(|e| {
        Diag::new(
            "strata::eval::template",
            "Invalid template result",
            e.message,
        )
        .at(expr.span)
    })
}
