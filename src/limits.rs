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

/// Bytes that functions and templates may build in one run (4 GiB): many
/// values each within the limits above can still exhaust memory together
/// (a thousand instances of a 60 MB string).
pub const MAX_BUILT_BYTES: usize = 4 << 30;

static BUILT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Counts what `v` took to build against [`MAX_BUILT_BYTES`]: an error
/// once the run has built more than that.
pub fn charge(v: &crate::lang::value::Value) -> Result<(), String> {
    use crate::lang::value::Value;
    let bytes = match v.unmarked() {
        Value::String(s) => s.len(),
        Value::List(_, vs) | Value::Set(_, vs) | Value::Tuple(vs) => {
            vs.len() * std::mem::size_of::<Value>()
        }
        Value::Map(_, m) | Value::Object(m) => m.len() * std::mem::size_of::<(String, Value)>(),
        _ => 0,
    };
    let total = BUILT.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed) + bytes;
    match over(
        total,
        MAX_BUILT_BYTES,
        "bytes built by functions and templates in this run",
    ) {
        Some(why) => Err(why),
        None => Ok(()),
    }
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
