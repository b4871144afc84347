//! Calls to key services, waited for: each on a thread and runtime of its
//! own, since the store may be called from inside the engine's runtime,
//! where blocking on another is refused.

/// `work` run to its end on a thread and runtime of its own.
pub fn blocking<T: Send>(
    work: impl std::future::Future<Output = Result<T, String>> + Send,
) -> Result<T, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(work)
        })
        .join()
        .unwrap_or_else(|_| Err("a call to a key service failed".into()))
    })
}

/// One JSON POST: the answer's text, or why there is none (the service's
/// status and words when it refused).
pub(crate) fn post(
    url: &str,
    headers: &[(&str, String)],
    body: &serde_json::Value,
) -> Result<String, String> {
    blocking(async {
        let mut req = reqwest::Client::new().post(url).json(body);
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let answer = req.send().await.map_err(|e| e.to_string())?;
        let status = answer.status();
        let text = answer.text().await.map_err(|e| e.to_string())?;
        match status.is_success() {
            true => Ok(text),
            false => Err(format!("{url}: {status}: {text}")),
        }
    })
}
