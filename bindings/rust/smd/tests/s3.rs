//! S3 settings against the local S3 server that scripts/test.sh starts (scripts/s3-server.sh
//! gives its SMD_S3_* variables). Without them the round trip fails when SMD_RUST_REQUIRE_S3=1
//! (test.sh sets it), else it returns early, saying why.
mod common;
use smd::{ErrorKind, Hook, HookOptions, Mode, S3Credentials, S3Settings, SaveConfig, TensorBoardWriter, Trial, TrialOptions};
use std::time::Duration;

fn server() -> Option<(S3Settings, String)> {
    let endpoint = match std::env::var("SMD_S3_ENDPOINT") {
        Ok(e) if !e.is_empty() => e,
        _ => {
            assert!(std::env::var("SMD_RUST_REQUIRE_S3").as_deref() != Ok("1"), "SMD_RUST_REQUIRE_S3=1 but no SMD_S3_ENDPOINT: the S3 server did not start");
            eprintln!("no local S3 server (SMD_S3_ENDPOINT): scripts/test.sh starts one");
            return None;
        }
    };
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let settings = S3Settings {
        endpoint: Some(endpoint),
        region: Some(var("SMD_S3_REGION")),
        credentials: Some(S3Credentials { access_key_id: var("SMD_S3_ACCESS_KEY"), secret_access_key: var("SMD_S3_SECRET_KEY"), session_token: None }),
        ..Default::default()
    };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    Some((settings, format!("s3://{}/rust-{}-{nanos}", var("SMD_S3_BUCKET"), std::process::id())))
}

#[test]
fn hook_and_trial_reach_s3_with_their_settings() {
    let Some((settings, uri)) = server() else { return };
    let mut sc = SaveConfig::new().unwrap();
    sc.set(Mode::All, 1, 0, -1, &[]).unwrap();
    let mut o = HookOptions::new().unwrap();
    o.set_s3(&settings).unwrap().set_fsync(true).unwrap().set_save_config(&sc).unwrap().add_include_regex("^w$").unwrap();
    let hook = Hook::new(&uri, Some(&o)).unwrap();
    hook.set_mode(Mode::Train).unwrap();
    for step in 0..3 {
        hook.begin_step().unwrap();
        hook.save_tensor("w", &[2], &[step as f32, step as f32 + 0.5], &[]).unwrap();
    }
    hook.close().unwrap();

    let mut to = TrialOptions::new().unwrap();
    to.set_s3(&settings).unwrap();
    let trial = Trial::open(&uri, Some(&to)).unwrap();
    assert!(trial.has_ended().unwrap());
    let v = trial.tensor("w").unwrap().value(2, Mode::Train, None).unwrap();
    assert_eq!(v.as_slice::<f32>().unwrap(), &[2.0, 2.5]);

    // A wrong secret set here wins over anything in the environment: the server refuses the
    // signature, an authentication error that never shows the secret.
    let mut bad = settings.clone();
    let wrong = format!("wrong-{}", settings.credentials.as_ref().unwrap().secret_access_key);
    bad.credentials.as_mut().unwrap().secret_access_key = wrong.clone();
    let mut to = TrialOptions::new().unwrap();
    to.set_s3(&bad).unwrap();
    let err = Trial::open(&uri, Some(&to)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    assert!(!err.to_string().contains(&wrong), "the error shows the secret: {err}");
}

#[test]
fn s3_settings_bad_input() {
    let mut o = HookOptions::new().unwrap();
    let style = S3Settings { addressing_style: Some("sideways".into()), ..Default::default() };
    assert_eq!(o.set_s3(&style).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let endpoint = S3Settings { endpoint: Some("127.0.0.1:9000".into()), ..Default::default() };
    assert_eq!(o.set_s3(&endpoint).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let half = S3Settings { credentials: Some(S3Credentials { access_key_id: "id".into(), ..Default::default() }), ..Default::default() };
    assert_eq!(o.set_s3(&half).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let nul = S3Settings {
        credentials: Some(S3Credentials { access_key_id: "id".into(), secret_access_key: "zzq\0qqz".into(), session_token: None }),
        ..Default::default()
    };
    let err = o.set_s3(&nul).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(!err.to_string().contains("zzq") && !err.to_string().contains("qqz"), "{err}");
    assert!(!format!("{:?}", nul).contains("zzq"), "Debug shows the secret");
    let mut to = TrialOptions::new().unwrap();
    to.set_s3(&S3Settings { endpoint: Some("http://127.0.0.1:9000".into()), region: Some("eu-west-1".into()), ..Default::default() }).unwrap();
    to.set_s3(&S3Settings {
        max_attempts: Some(3),
        backoff: Some(Duration::from_millis(100)),
        stall_timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    })
    .unwrap();
    to.set_s3(&S3Settings::default()).unwrap(); // back to the AWS configuration chain
}

/// Settings that the storage options object built from them refuses, whichever part of smd takes
/// it: hook options, trial options, the TensorBoard writer.
#[test]
fn bad_s3_settings_are_refused_everywhere() {
    let keys = |id: &str, secret: &str, token: Option<&str>| S3Settings {
        credentials: Some(S3Credentials { access_key_id: id.into(), secret_access_key: secret.into(), session_token: token.map(Into::into) }),
        ..Default::default()
    };
    let cases = [
        ("ftp endpoint", S3Settings { endpoint: Some("ftp://x".into()), ..Default::default() }),
        ("sideways addressing", S3Settings { addressing_style: Some("sideways".into()), ..Default::default() }),
        ("key id without secret", keys("id", "", None)),
        ("secret without key id", keys("", "secret", None)),
        ("token without keys", keys("", "", Some("tok"))),
        ("attempts beyond i32", S3Settings { max_attempts: Some(u32::MAX), ..Default::default() }),
        ("backoff beyond i32 ms", S3Settings { backoff: Some(Duration::from_secs(1 << 40)), ..Default::default() }),
        ("stall timeout beyond i64 ms", S3Settings { stall_timeout: Some(Duration::MAX), ..Default::default() }),
    ];
    let dir = common::TempDir::new("s3-settings");
    for (name, bad) in &cases {
        let mut o = HookOptions::new().unwrap();
        assert_eq!(o.set_s3(bad).unwrap_err().kind(), ErrorKind::InvalidArgument, "hook options, {name}");
        let mut to = TrialOptions::new().unwrap();
        assert_eq!(to.set_s3(bad).unwrap_err().kind(), ErrorKind::InvalidArgument, "trial options, {name}");
        let err = TensorBoardWriter::with_s3(dir.join("tb"), bad).err().unwrap_or_else(|| panic!("TensorBoard writer, {name}: accepted"));
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "TensorBoard writer, {name}: {err}");
    }
}

#[test]
fn tensorboard_writer_takes_s3_settings() {
    // A local folder ignores the settings, which are still checked.
    let dir = common::TempDir::new("s3-settings");
    let settings = S3Settings {
        endpoint: Some("http://127.0.0.1:1".into()),
        region: Some("eu-west-1".into()),
        max_attempts: Some(2),
        backoff: Some(Duration::from_micros(1)),
        stall_timeout: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let mut w = TensorBoardWriter::with_s3(&dir.0, &settings).unwrap();
    w.add_scalar(0, Mode::Train, 0.0, "loss", 0.5).unwrap();
    w.close().unwrap();
    let files: Vec<_> = std::fs::read_dir(dir.join("TRAIN")).unwrap().collect();
    assert_eq!(files.len(), 1, "{files:?}");

    let Some((settings, uri)) = server() else { return };
    let mut w = TensorBoardWriter::with_s3(format!("{uri}/tb"), &settings).unwrap();
    w.add_scalar(0, Mode::Train, 0.0, "loss", 0.5).unwrap();
    w.close().unwrap();
    // The settings are what reaches the server: a wrong secret is refused by the first request
    // (the first record, or at the latest the upload at close), without showing the secret.
    let mut bad = settings.clone();
    let wrong = format!("wrong-{}", settings.credentials.as_ref().unwrap().secret_access_key);
    bad.credentials.as_mut().unwrap().secret_access_key = wrong.clone();
    bad.max_attempts = Some(1);
    let mut w = TensorBoardWriter::with_s3(format!("{uri}/tb-bad"), &bad).unwrap();
    let err = w.add_scalar(0, Mode::Train, 0.0, "loss", 0.5).and_then(|()| w.close()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    assert!(!err.to_string().contains(&wrong), "the error shows the secret: {err}");
}
