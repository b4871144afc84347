//! The S3 backend, for any store that speaks S3 with conditional writes
//! (AWS S3, MinIO, GCS's interoperability API). No DynamoDB table:
//! - the lock is an object `<key>.tflock` created with `If-None-Match: *`,
//!   so of two runs exactly one creates it (the other is told who holds
//!   it; a run that died leaves it for `force-unlock`, as S3 cannot tell a
//!   dead holder from a slow one);
//! - the state is written with `If-Match: <the ETag read>` (or
//!   `If-None-Match: *` when there was none), so a run that lost a race
//!   fails rather than overwriting the winner;
//! - the apply journal is one object per group commit under
//!   `<key>.journal/`, durable when the PUT returns, deleted after the
//!   state that includes it is written;
//! - the previous state is copied to `<key>.backup` before each write
//!   (keep versioning on the bucket too: it keeps every version).

mod kms;
pub use kms::KmsDataKeys;

use aws_sdk_s3::config::retry::{RetryPartition, TokenBucket};
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::ServerSideEncryption;
use aws_sdk_s3::Client;
use std::sync::atomic::{AtomicU64, Ordering};
use strata_state::{
    on_own_thread, Acquired, Backend, JournalAfter, LockInfo, StateError, Stored, Version,
};

/// The backend block's settings, named as Terraform's `s3` backend names
/// them.
#[derive(Debug, Clone, Default)]
pub struct S3Config {
    pub bucket: String,
    pub key: String,
    pub region: Option<String>,
    /// An S3-compatible endpoint (MinIO, GCS); else the SDK's standard
    /// ones (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, or AWS's).
    pub endpoint: Option<String>,
    pub profile: Option<String>,
    /// Static keys, for S3-compatible stores outside AWS (MinIO); AWS
    /// users leave them out and let the SDK's chain find credentials.
    pub access_key: Option<String>,
    pub secret_key: Option<String>,
    /// `bucket.host/key` addressing is the default; path style is
    /// `host/bucket/key`, which most S3-compatible stores want.
    pub use_path_style: bool,
    /// Server-side encryption: SSE-S3 (AES256), or SSE-KMS with `kms_key_id`.
    pub encrypt: bool,
    pub kms_key_id: Option<String>,
    /// Non-default workspaces live at `<prefix>/<workspace>/<key>`.
    pub workspace_key_prefix: String,
    pub workspace: String,
}

pub const DEFAULT_WORKSPACE_PREFIX: &str = "env:";

pub struct S3Backend {
    config: S3Config,
    /// The state object's key for this workspace.
    key: String,
    client: Client,
    /// The SDK's own runtime (an `Option` only so that dropping can hand
    /// it off: the engine may drop a backend inside its async runtime,
    /// where a runtime cannot be dropped in place).
    runtime: Option<tokio::runtime::Runtime>,
    /// Journal objects are named `<run>/<n>`: sorted by name they are in
    /// the order they were written.
    run: String,
    appended: AtomicU64,
}

fn status<E>(e: &aws_sdk_s3::error::SdkError<E>) -> Option<u16> {
    e.raw_response().map(|r| r.status().as_u16())
}

impl S3Backend {
    pub fn new(config: S3Config) -> Result<S3Backend, StateError> {
        if config.bucket.is_empty() || config.key.is_empty() {
            return Err(StateError::backend("s3", "bucket and key are required"));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StateError::backend("s3", e))?;
        let client = on_own_thread(|| {
            runtime.block_on(async {
                // Throttling and 5xx are retried by the SDK; more than its
                // default 3 attempts, as the AWS driver does, since a lost
                // journal write stops an apply.
                let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
                    .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(8));
                if let Some(r) = &config.region {
                    loader = loader.region(aws_config::Region::new(r.clone()));
                }
                if let Some(p) = &config.profile {
                    loader = loader.profile_name(p);
                }
                if let (Some(id), Some(secret)) = (&config.access_key, &config.secret_key) {
                    loader = loader.credentials_provider(aws_sdk_s3::config::Credentials::new(
                        id, secret, None, None, "backend",
                    ));
                }
                let shared = loader.load().await;
                // Nor with the SDK's retry quota, which stops retrying once
                // a process has retried a few hundred times: an apply's
                // journal writes go on for as long as the apply does.
                let retries = RetryPartition::custom("strata-state")
                    .token_bucket(TokenBucket::unlimited())
                    .build();
                let mut s3 = aws_sdk_s3::config::Builder::from(&shared)
                    .retry_partition(retries)
                    .force_path_style(config.use_path_style);
                if let Some(url) = &config.endpoint {
                    s3 = s3.endpoint_url(url);
                }
                Client::from_conf(s3.build())
            })
        });
        let key = if config.workspace == "default" {
            config.key.clone()
        } else {
            format!(
                "{}/{}/{}",
                config.workspace_key_prefix, config.workspace, config.key
            )
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let run = format!(
            "{nanos:020}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        Ok(S3Backend {
            config,
            key,
            client,
            runtime: Some(runtime),
            run,
            appended: AtomicU64::new(0),
        })
    }

    fn block<T: Send>(&self, f: impl std::future::Future<Output = T> + Send) -> T {
        on_own_thread(|| match &self.runtime {
            Some(rt) => rt.block_on(f),
            // Only `drop` takes the runtime, and nothing runs after it.
            None => unreachable!("an S3 backend used after it was dropped"),
        })
    }

    fn err(&self, e: impl ProvideErrorMetadata + std::fmt::Display) -> StateError {
        let detail = match (e.code(), e.message()) {
            (Some(c), Some(m)) => format!("{c}: {m}"),
            (Some(c), None) => c.to_string(),
            _ => e.to_string(),
        };
        StateError::backend(self.location(), detail)
    }

    fn lock_key(&self) -> String {
        format!("{}.tflock", self.key)
    }

    fn history_key(&self) -> String {
        format!("{}.history", self.key)
    }

    fn journal_prefix(&self) -> String {
        format!("{}.journal/", self.key)
    }

    fn put(
        &self,
        key: &str,
        body: &str,
    ) -> aws_sdk_s3::operation::put_object::builders::PutObjectFluentBuilder {
        let mut put = self
            .client
            .put_object()
            .bucket(&self.config.bucket)
            .key(key)
            .body(ByteStream::from(body.as_bytes().to_vec()));
        if self.config.encrypt || self.config.kms_key_id.is_some() {
            put = match &self.config.kms_key_id {
                Some(k) => put
                    .server_side_encryption(ServerSideEncryption::AwsKms)
                    .ssekms_key_id(k),
                None => put.server_side_encryption(ServerSideEncryption::Aes256),
            };
        }
        put
    }

    /// The object's text and ETag, or `None` when there is none.
    async fn get(&self, key: &str) -> Result<Option<(String, Option<String>)>, StateError> {
        let out = match self
            .client
            .get_object()
            .bucket(&self.config.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(o) => o,
            Err(e) if status(&e) == Some(404) => return Ok(None),
            Err(e) => return Err(self.err(e)),
        };
        let etag = out.e_tag().map(str::to_string);
        let bytes = out
            .body
            .collect()
            .await
            .map_err(|e| StateError::backend(self.location(), e))?
            .into_bytes();
        let text = StateError::text(&self.location(), bytes.to_vec())?;
        Ok(Some((text, etag)))
    }

    async fn holder(&self) -> Result<Option<(LockInfo, Option<String>)>, StateError> {
        Ok(self
            .get(&self.lock_key())
            .await?
            .and_then(|(t, etag)| LockInfo::decode(&t).map(|i| (i, etag))))
    }

    async fn journal_keys(&self) -> Result<Vec<String>, StateError> {
        self.keys_under(&self.journal_prefix()).await
    }

    /// Every object key starting with `prefix`, in order.
    async fn keys_under(&self, prefix: &str) -> Result<Vec<String>, StateError> {
        let mut keys = Vec::new();
        let mut pages = self
            .client
            .list_objects_v2()
            .bucket(&self.config.bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| self.err(e))?;
            keys.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_string)),
            );
        }
        keys.sort();
        Ok(keys)
    }

    async fn delete(&self, key: &str) -> Result<(), StateError> {
        self.client
            .delete_object()
            .bucket(&self.config.bucket)
            .key(key)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}

impl Drop for S3Backend {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Backend for S3Backend {
    /// Terraform's s3 layout: "default" at `key`, each other workspace at
    /// `<workspace_key_prefix>/<name>/<key>`.
    fn workspaces(&self) -> Result<Vec<String>, StateError> {
        let prefix = format!("{}/", self.config.workspace_key_prefix);
        let suffix = format!("/{}", self.config.key);
        let keys = self.block(self.keys_under(&prefix))?;
        let mut names = vec!["default".to_string()];
        names.extend(keys.iter().filter_map(|k| {
            let name = k.strip_prefix(&prefix)?.strip_suffix(&suffix)?;
            (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
        }));
        Ok(names)
    }

    fn delete_workspace(&self) -> Result<(), StateError> {
        self.block(async {
            let mut doomed = self.journal_keys().await?;
            doomed.push(format!("{}.backup", self.key));
            doomed.push(self.history_key());
            doomed.push(self.key.clone());
            for key in doomed {
                self.delete(&key).await?;
            }
            Ok(())
        })
    }

    fn location(&self) -> String {
        format!("s3://{}/{}", self.config.bucket, self.key)
    }

    fn lock(&self, info: &LockInfo) -> Result<Acquired, StateError> {
        let text = info.encode();
        self.block(async {
            match self
                .put(&self.lock_key(), &text)
                .if_none_match("*")
                .send()
                .await
            {
                Ok(_) => Ok(Acquired {
                    guard: Box::new(()),
                    took_over: None,
                }),
                // 412: the lock object exists; 409: another conditional
                // write to it is in flight. Either way someone holds it.
                Err(e) if matches!(status(&e), Some(412 | 409)) => {
                    Err(match self.holder().await? {
                        Some((holder, _)) => holder.held(),
                        None => StateError::Locked {
                            id: "unknown".into(),
                            who: format!("an unreadable lock object {}", self.lock_key()),
                            operation: "unknown".into(),
                            created: "unknown".into(),
                        },
                    })
                }
                Err(e) => Err(self.err(e)),
            }
        })
    }

    fn check_lock(&self, id: &str) -> Result<(), StateError> {
        LockInfo::check(self.block(self.holder())?.map(|(i, _)| i), id)
    }

    fn unlock(&self, id: &str) -> Result<(), StateError> {
        self.block(async {
            if let Some((holder, etag)) = self.holder().await? {
                if holder.id == id {
                    // Only the version read: a lock taken since stays.
                    let mut delete = self
                        .client
                        .delete_object()
                        .bucket(&self.config.bucket)
                        .key(self.lock_key());
                    if let Some(etag) = etag {
                        delete = delete.if_match(etag);
                    }
                    delete.send().await.map_err(|e| self.err(e))?;
                }
            }
            Ok::<(), StateError>(())
        })
    }

    fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        self.block(async {
            let Some((holder, _)) = self.holder().await? else {
                // An object that is not lock info is still a lock.
                return match self.get(&self.lock_key()).await? {
                    Some(_) => self.delete(&self.lock_key()).await,
                    None => Err(StateError::NotLocked),
                };
            };
            if holder.id != id {
                return Err(StateError::LockMismatch {
                    given: id.to_string(),
                    held: holder.id,
                });
            }
            self.delete(&self.lock_key()).await
        })
    }

    fn read(&self) -> Result<Stored, StateError> {
        self.block(async {
            let state = self.get(&self.key).await?;
            let mut journal = String::new();
            for key in self.journal_keys().await? {
                if let Some((text, _)) = self.get(&key).await? {
                    journal.push_str(&text);
                }
            }
            let (state, version) = match state {
                Some((text, etag)) => (Some(text), etag.map(Version)),
                None => (None, None),
            };
            Ok(Stored {
                state,
                version,
                journal,
            })
        })
    }

    fn write(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
    ) -> Result<Version, StateError> {
        self.block(async {
            let conflict = || StateError::Conflict {
                location: self.location(),
            };
            if expected.is_some() {
                let copy = self
                    .client
                    .copy_object()
                    .bucket(&self.config.bucket)
                    .key(format!("{}.backup", self.key))
                    .copy_source(format!("{}/{}", self.config.bucket, self.key));
                match copy.send().await {
                    Ok(_) => {}
                    Err(e) if status(&e) == Some(404) => return Err(conflict()),
                    Err(e) => return Err(self.err(e)),
                }
            }
            let put = self.put(&self.key, text);
            let put = match expected {
                Some(v) => put.if_match(&v.0),
                None => put.if_none_match("*"),
            };
            let out = match put.send().await {
                Ok(o) => o,
                Err(e) if matches!(status(&e), Some(412 | 409)) => return Err(conflict()),
                Err(e) => return Err(self.err(e)),
            };
            if journal == JournalAfter::Dropped {
                // The state now holds everything the journal did.
                for key in self.journal_keys().await? {
                    self.delete(&key).await?;
                }
            }
            out.e_tag()
                .map(|t| Version(t.to_string()))
                .ok_or_else(|| StateError::backend(self.location(), "the store returned no ETag"))
        })
    }

    fn read_history(&self) -> Result<String, StateError> {
        let found = self.block(self.get(&self.history_key()))?;
        Ok(found.map(|(text, _)| text).unwrap_or_default())
    }

    /// One PUT: S3 stores an object whole or not at all.
    fn write_history(&self, text: &str) -> Result<(), StateError> {
        self.block(async { self.put(&self.history_key(), text).send().await })
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    fn append(&self, lines: &str) -> Result<(), StateError> {
        let n = self.appended.fetch_add(1, Ordering::SeqCst);
        let key = format!("{}{}/{n:010}", self.journal_prefix(), self.run);
        self.block(async { self.put(&key, lines).send().await })
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}
