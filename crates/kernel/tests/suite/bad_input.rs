//! Bad input to the verbs: each a clear, coded error; nothing crashes.

use std::sync::Arc;

use weft_protocol::{ErrorCode, InteractRequest, InteractionResponse, PromptRequest};

use super::support::*;

fn code_of<T>(r: Result<T, weft_kernel::KernelError>) -> ErrorCode {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            e.code()
        }
    }
}

#[tokio::test]
async fn unknown_agent_session_workdir_and_interaction_are_clear_errors() {
    let loom = loom_with(Arc::new(ScriptDriver::default()));
    let tmp = std::env::temp_dir().to_string_lossy().into_owned();
    let hi = || PromptRequest {
        prompt: "hi".into(),
        workdir: Some(tmp.clone()),
        ..Default::default()
    };
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let refused = [
        (
            PromptRequest {
                agent: Some("nope".into()),
                ..hi()
            },
            ErrorCode::UnknownAgent,
        ),
        (
            PromptRequest {
                session_key: Some("script:missing".into()),
                workdir: None,
                ..hi()
            },
            ErrorCode::UnknownSession,
        ),
        (
            PromptRequest {
                workdir: Some(file.path().to_string_lossy().into()),
                ..hi()
            },
            ErrorCode::BadWorkdir,
        ),
        (
            PromptRequest {
                prompt: "  ".into(),
                ..hi()
            },
            ErrorCode::BadRequest,
        ),
        // The accounts port's refusal keeps its own code (this kernel has no accounts).
        (
            PromptRequest {
                account: Some("acct-nope".into()),
                ..hi()
            },
            ErrorCode::Account,
        ),
    ];
    for (request, code) in refused {
        let what = format!("{request:?}");
        assert_eq!(code_of(loom.prompt(request).await), code, "{what}");
    }
    assert_eq!(
        code_of(loom.get_snapshot("garbage").await),
        ErrorCode::UnknownSession
    );
    assert_eq!(
        code_of(loom.get_history("script:missing").await),
        ErrorCode::UnknownSession
    );
    assert_eq!(
        code_of(loom.stop("script:missing").await),
        ErrorCode::UnknownSession
    );

    let r = loom
        .prompt(PromptRequest {
            workdir: Some("/definitely/not/here".into()),
            ..hi()
        })
        .await;
    let e = r.err().unwrap_or_else(|| panic!("expected an error"));
    assert_eq!(e.code(), ErrorCode::BadWorkdir);
    assert!(e.to_string().contains("/definitely/not/here"), "{e}");

    let ok = send(&loom, hi()).await;
    let r = loom
        .interact(InteractRequest {
            session_key: ok.session_key.clone(),
            prompt_id: "nope".into(),
            response: InteractionResponse::cancel(),
        })
        .await;
    assert_eq!(code_of(r), ErrorCode::NotPending);
    assert_eq!(
        code_of(loom.list_models("nope").await),
        ErrorCode::UnknownAgent
    );
}
