//! How large a value a configuration may ask for. Each limit is far above
//! what real configurations reach and far below what would exhaust memory:
//! a size a configuration asks for is checked against these before memory
//! is reserved, and what functions and templates build is checked as it
//! is made, so a runaway (a local that doubles forty times) ends as an
//! error, never as an aborted process holding the state lock.

/// Instances of one resource or module call (`count`, `for_each`).
pub const MAX_INSTANCES: usize = 1_000_000;

/// Elements of one list, set, tuple, map or object.
pub const MAX_ELEMENTS: usize = 1_000_000;

/// Bytes of one string (64 MiB).
pub const MAX_STRING_BYTES: usize = 64 << 20;

/// Bytes that expressions may build in one run (1 GiB), counted where
/// values are made: each constructor (`[…]`, `{…}`), `for` expression,
/// template and function result, by all it holds. Many values each within
/// the limits above can still exhaust memory together (a `for` nesting
/// three ranges, a local that doubles forty times); what is counted is
/// what was built, so a value built inside another counts in both, which
/// real configurations (kilobytes a resource) are far from.
pub const MAX_BUILT_BYTES: usize = 1 << 30;

static BUILT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts what `v` took to build against [`MAX_BUILT_BYTES`]: an error
/// once the run has built more than that.
pub fn charge(v: &crate::lang::value::Value) -> Result<(), String> {
    let bytes = deep_bytes(v);
    let total = BUILT.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes;
    match total > MAX_BUILT_BYTES {
        true => Err(format!(
            "the run would then have built {total} bytes of values, more than strata's limit of {MAX_BUILT_BYTES} for one run"
        )),
        false => Ok(()),
    }
}

/// The bytes `v` holds, all the way down: what building it, or a copy of
/// it, costs. A loop rather than recursion, as values nest deep.
fn deep_bytes(v: &crate::lang::value::Value) -> usize {
    use crate::lang::value::Value;
    let mut total = 0;
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        total += std::mem::size_of::<Value>();
        match v {
            Value::Sensitive(x) => todo.push(x),
            Value::String(s) => total += s.len(),
            Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => todo.extend(vs),
            Value::Map(_, m) | Value::Object(m) => {
                for (k, x) in m.iter() {
                    total += k.len();
                    todo.push(x);
                }
            }
            _ => {}
        }
    }
    total
}

/// Why a value of `len` things (`what`: "elements", "bytes") is refused,
/// if it is over `max`.
pub fn over(len: usize, max: usize, what: &str) -> Option<String> {
    (len > max)
        .then(|| format!("the result would hold {len} {what}, more than strata's limit of {max}"))
}

/// Why `v`, just built, is refused: larger than the limits above, or past
/// what the run may build in all.
pub fn oversized(v: &crate::lang::value::Value) -> Option<String> {
    use crate::lang::value::Value;
    let one = match v.unmarked() {
        Value::String(s) => over(s.len(), MAX_STRING_BYTES, "bytes"),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            over(vs.len(), MAX_ELEMENTS, "elements")
        }
        Value::Map(_, m) | Value::Object(m) => over(m.len(), MAX_ELEMENTS, "elements"),
        _ => None,
    };
    one.or_else(|| charge(v).err())
}
