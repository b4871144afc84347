//! The `aws_kms` key provider's calls to AWS KMS, for state encryption:
//! `GenerateDataKey` when a run first seals, `Decrypt` to open what an
//! earlier run sealed. Here, beside the S3 backend, so the SDK's crates
//! stay in the crates that already build them.

use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::DataKeySpec;
use strata_state::encryption::{AwsKms, DataKey, DataKeys, KeySpec};
use strata_state::on_own_thread;

/// KMS through the official SDK, a client per call's settings.
#[derive(Debug, Default)]
pub struct KmsDataKeys;

impl DataKeys for KmsDataKeys {
    fn generate(&self, kms: &AwsKms) -> Result<DataKey, String> {
        let spec = match kms.key_spec {
            KeySpec::Aes256 => DataKeySpec::Aes256,
            KeySpec::Aes128 => DataKeySpec::Aes128,
        };
        let made = call(kms, |c| async move {
            c.generate_data_key()
                .key_id(&kms.kms_key_id)
                .key_spec(spec)
                .send()
                .await
        })
        .map_err(|e| format!("failed to generate key: {e}"))?;
        match (made.plaintext, made.ciphertext_blob) {
            (Some(p), Some(c)) => Ok(DataKey {
                plaintext: p.into_inner(),
                ciphertext_blob: c.into_inner(),
            }),
            _ => Err("failed to generate key: KMS returned no key".into()),
        }
    }

    fn decrypt(&self, kms: &AwsKms, blob: &[u8]) -> Result<Vec<u8>, String> {
        let opened = call(kms, |c| async move {
            c.decrypt()
                .key_id(&kms.kms_key_id)
                .ciphertext_blob(Blob::new(blob))
                .send()
                .await
        })?;
        opened
            .plaintext
            .map(Blob::into_inner)
            .ok_or_else(|| "KMS returned no key".into())
    }
}

/// One KMS call on a runtime of its own (the engine may be inside its own).
fn call<T, E, F>(kms: &AwsKms, f: impl FnOnce(aws_sdk_kms::Client) -> F + Send) -> Result<T, String>
where
    T: Send,
    E: std::error::Error + Send + Sync + 'static,
    F: std::future::Future<Output = Result<T, aws_sdk_kms::error::SdkError<E>>> + Send,
{
    on_own_thread(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let client = client(kms).await;
            f(client).await.map_err(|e| {
                let e = aws_sdk_kms::error::DisplayErrorContext(e);
                e.to_string()
            })
        })
    })
}

async fn client(kms: &AwsKms) -> aws_sdk_kms::Client {
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
    if let Some(r) = &kms.region {
        loader = loader.region(aws_config::Region::new(r.clone()));
    }
    if let Some(p) = &kms.profile {
        loader = loader.profile_name(p);
    }
    if let (Some(id), Some(secret)) = (&kms.access_key, &kms.secret_key) {
        loader = loader.credentials_provider(aws_sdk_kms::config::Credentials::new(
            id,
            secret,
            kms.token.clone(),
            None,
            "key_provider",
        ));
    }
    let shared = loader.load().await;
    let mut conf = aws_sdk_kms::config::Builder::from(&shared);
    if let Some(url) = &kms.endpoint {
        conf = conf.endpoint_url(url);
    }
    aws_sdk_kms::Client::from_conf(conf.build())
}
