//! Work spread over the cores where pieces are independent and large:
//! parsing files, decoding a state's objects. Evaluation stays on one
//! thread (see ARCHITECTURE.md); this is for the stages around it.

/// The stack of every thread that parses or evaluates: both recurse as
/// deep as expressions nest (bounded by `syntax::MAX_NESTING`), and hostile
/// input must end in an error, never an overflow. Only what is touched is
/// committed.
pub const STACK: usize = 512 << 20;

/// Where parsing and evaluation recurse, a thread with less stack left
/// than this (a caller's own thread: a test, a fuzzer, a library user)
/// gets a further [`GROW`] bytes for what follows.
pub const RED_ZONE: usize = 256 << 10;
pub const GROW: usize = 16 << 20;

/// `f` over `items` on every core, results in order.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads == 1 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        // A chunk whose thread cannot be made runs here instead.
        let parts: Vec<Result<_, Vec<R>>> = items
            .chunks(chunk)
            .map(|part| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(s, move || part.iter().map(f).collect::<Vec<R>>())
                    .map_err(|_| part.iter().map(f).collect())
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| match p {
                Ok(handle) => match handle.join() {
                    Ok(part) => part,
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(done) => done,
            })
            .collect()
    })
}

/// Frees `big` on a thread of its own, so a command that is done does not
/// wait for a large plan or state to be taken apart piece by piece (the
/// process may exit first, which frees it all at once). When no thread can
/// be had, the closure holding `big` is dropped here, and `big` with it.
pub fn drop_later<T: Send + 'static>(big: T) {
    let spawned = std::thread::Builder::new()
        .name("drop".into())
        .stack_size(STACK)
        .spawn(move || drop(big));
    drop(spawned);
}
