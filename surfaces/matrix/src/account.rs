//! `login`, `allow`, `deny`, `status`, `logout`: the bot's account and whom it obeys.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{bail, Context};
use base64::Engine;
use clap::Args;
use matrix_sdk::ruma::api::client::uiaa::{
    AuthData, MatrixUserIdentifier, Password, UserIdentifier,
};
use matrix_sdk::ruma::OwnedUserId;
use serde_json::json;
use zeroize::Zeroizing;

use crate::config::{now_ms, Config, Paths, State};
use crate::secret::{self, Kind};

#[derive(Args)]
pub struct LoginArgs {
    /// The homeserver's URL (https://matrix.example.org).
    #[arg(long)]
    homeserver: String,
    /// The bot's Matrix id (@weft-bot:example.org).
    #[arg(long)]
    user: String,
    /// Read an access token from stdin instead of a password (the device it belongs
    /// to is reused; cross-signing then needs the password, so the device stays
    /// unverified).
    #[arg(long)]
    access_token_stdin: bool,
}

/// Reads one secret: all of stdin when it is not a terminal, else asked for.
fn read_secret(what: &str) -> anyhow::Result<Zeroizing<String>> {
    let value = if std::io::stdin().is_terminal() {
        Zeroizing::new(rpassword::prompt_password(format!("{what}: ")).context("reading it")?)
    } else {
        let mut s = Zeroizing::new(String::new());
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading stdin")?;
        s
    };
    let trimmed = Zeroizing::new(value.trim_end_matches(['\n', '\r']).to_string());
    if trimmed.is_empty() {
        bail!("no {what} given");
    }
    Ok(trimmed)
}

fn parse_user(mxid: &str) -> anyhow::Result<OwnedUserId> {
    OwnedUserId::try_from(mxid)
        .map_err(|e| anyhow::anyhow!("{mxid:?} is not a Matrix user id (@name:server): {e}"))
}

pub async fn login(
    home: &weft_client::Home,
    paths: &Paths,
    args: LoginArgs,
) -> anyhow::Result<ExitCode> {
    let user = parse_user(&args.user)?;
    let old = Config::load(paths)?;
    if let Some(old) = old.as_ref().filter(|c| !c.user.is_empty()) {
        bail!(
            "already logged in as {} on {}; `weft matrix logout` first",
            old.user,
            old.homeserver
        );
    }
    // Before anything reaches the homeserver: a token that could not be kept would
    // leave a stray device behind.
    secret::check_available(user.as_str())?;
    let what = if args.access_token_stdin {
        "access token"
    } else {
        "password"
    };
    let given = read_secret(&format!("Matrix {what} for {user}"))?;
    let mut key = [0u8; 32];
    rand::fill(&mut key);
    let passphrase = Zeroizing::new(base64::engine::general_purpose::STANDARD_NO_PAD.encode(key));
    if paths.store().exists() {
        std::fs::remove_dir_all(paths.store()).context("removing an old store")?;
    }
    paths.ensure()?;
    let (device_id, token, client) = if args.access_token_stdin {
        let device = device_of_token(&args.homeserver, &user, &given).await?;
        let client = crate::matrix::client(&args.homeserver, &paths.store(), &passphrase).await?;
        crate::matrix::restore(&client, user.as_str(), &device, &given).await?;
        (device, Zeroizing::new(given.to_string()), client)
    } else {
        let client = crate::matrix::client(&args.homeserver, &paths.store(), &passphrase).await?;
        let response = client
            .matrix_auth()
            .login_username(user.as_str(), &given)
            .initial_device_display_name("Weft")
            .send()
            .await
            .context("the homeserver refused the login")?;
        let token = Zeroizing::new(response.access_token.clone());
        (response.device_id.to_string(), token, client)
    };
    secret::set(user.as_str(), Kind::Passphrase, &passphrase)?;
    secret::set(user.as_str(), Kind::Token, &token)?;
    let password = (!args.access_token_stdin).then_some(given);
    let verified = cross_sign(&client, &user, password.as_ref().map(|p| p.as_str())).await;
    let mut config = Config::new(args.homeserver, user.to_string(), device_id, now_ms());
    config.verified = verified;
    if let Some(old) = old {
        config.allowed = old.allowed;
        config.room_per_session = old.room_per_session;
        config.edit_interval_ms = old.edit_interval_ms;
    }
    config.save(paths)?;
    State::default().save(paths)?;
    println!(
        "logged in as {} (device {}{})",
        config.user,
        config.device_id,
        if verified { ", cross-signed" } else { "" }
    );
    if config.allowed.is_empty() {
        println!("next: `weft matrix allow @you:your.server` (only allowed users are obeyed)");
    }
    reload(home).await;
    Ok(ExitCode::SUCCESS)
}

/// The device an access token belongs to (asked of the homeserver with a throwaway
/// client that keeps nothing).
async fn device_of_token(
    homeserver: &str,
    user: &OwnedUserId,
    token: &str,
) -> anyhow::Result<String> {
    let probe = matrix_sdk::Client::builder()
        .homeserver_url(homeserver)
        .request_config(crate::matrix::default_config())
        .build()
        .await
        .context("cannot reach the homeserver")?;
    crate::matrix::restore(&probe, user.as_str(), "WEFTPROBE", token).await?;
    let me = probe
        .whoami()
        .await
        .context("the homeserver refused the token")?;
    if me.user_id != *user {
        bail!("the token belongs to {}, not {user}", me.user_id);
    }
    me.device_id
        .map(|d| d.to_string())
        .context("the homeserver did not say which device the token belongs to")
}

/// Sets up cross-signing so the bot's device shows as verified by its own account
/// (needs the password for the homeserver's interactive auth); whether it is.
async fn cross_sign(
    client: &matrix_sdk::Client,
    user: &OwnedUserId,
    password: Option<&str>,
) -> bool {
    // The device's keys go up with the first sync.
    let settings = matrix_sdk::config::SyncSettings::default().timeout(std::time::Duration::ZERO);
    if let Err(e) = client.sync_once(settings).await {
        eprintln!("weft-matrix: first sync failed: {e}");
        return false;
    }
    let encryption = client.encryption();
    if let Err(first) = encryption.bootstrap_cross_signing_if_needed(None).await {
        let Some(password) = password else {
            eprintln!("weft-matrix: no cross-signing without the password ({first}); the device stays unverified");
            return false;
        };
        let auth = AuthData::Password(Password::new(
            UserIdentifier::Matrix(MatrixUserIdentifier::new(user.to_string())),
            password.to_string(),
        ));
        if let Err(e) = encryption
            .bootstrap_cross_signing_if_needed(Some(auth))
            .await
        {
            eprintln!("weft-matrix: cross-signing failed: {e}; the device stays unverified");
            return false;
        }
    }
    // The device's new signature comes back with the next key query.
    let settings = matrix_sdk::config::SyncSettings::default().timeout(std::time::Duration::ZERO);
    let _ = client.sync_once(settings).await;
    let signed = match encryption.get_own_device().await {
        Ok(Some(device)) => device.is_cross_signed_by_owner(),
        _ => false,
    };
    let complete = encryption
        .cross_signing_status()
        .await
        .is_some_and(|s| s.is_complete());
    if !signed {
        eprintln!("weft-matrix: cross-signing keys are set up (complete: {complete}), but the device is not yet signed by them");
    }
    signed && complete
}

/// Asks a running daemon to restart the surface with its new settings (none running:
/// it starts the surface when it starts).
async fn reload(home: &weft_client::Home) {
    let hello = weft_client::hello_with_env("matrix");
    let Ok((client, _events)) = weft_client::Client::connect(home, hello).await else {
        return;
    };
    let request = weft_protocol::verb::ReloadSurface {
        name: "matrix".into(),
    };
    if let Err(e) = client.send(request).await {
        eprintln!("weft-matrix: the daemon did not restart the surface: {e}");
    }
    client.close();
}

pub fn allow(paths: &Paths, mxid: &str, allowed: bool) -> anyhow::Result<ExitCode> {
    let user = parse_user(mxid)?;
    let mut config = Config::load(paths)?.unwrap_or_else(|| Config {
        room_per_session: true,
        edit_interval_ms: 2000,
        ..Config::default()
    });
    let had = config.is_allowed(user.as_str());
    if allowed && !had {
        config.allowed.push(user.to_string());
    } else if !allowed {
        config.allowed.retain(|a| a != user.as_str());
    }
    config.save(paths)?;
    match (allowed, had) {
        (true, true) => println!("{user} was already allowed"),
        (true, false) => println!("{user} may now control the agents"),
        (false, true) => println!("{user} is no longer allowed"),
        (false, false) => println!("{user} was not allowed"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn status(paths: &Paths, json: bool) -> anyhow::Result<ExitCode> {
    let config = Config::load(paths)?.unwrap_or_default();
    let state = State::load(paths)?;
    let mut rooms = Vec::new();
    for (user, room) in &state.control_rooms {
        rooms.push(json!({"roomId": room, "kind": "control", "user": user}));
    }
    for (room, s) in &state.session_rooms {
        if !state.is_control(room) {
            rooms.push(json!({"roomId": room, "kind": "session", "user": s.user, "sessionKey": s.session_key}));
        }
    }
    let logged_in = !config.user.is_empty();
    let value = json!({
        "homeserver": logged_in.then_some(&config.homeserver),
        "user": logged_in.then_some(&config.user),
        "deviceId": logged_in.then_some(&config.device_id),
        "verified": config.verified,
        "allowed": config.allowed,
        "rooms": rooms,
    });
    if json {
        println!("{value}");
        return Ok(ExitCode::SUCCESS);
    }
    if logged_in {
        println!(
            "{} on {} (device {}, {})",
            config.user,
            config.homeserver,
            config.device_id,
            if config.verified {
                "cross-signed"
            } else {
                "not verified"
            }
        );
    } else {
        println!("not logged in (`weft matrix login --homeserver URL --user MXID`)");
    }
    if config.allowed.is_empty() {
        println!("allowed: nobody (`weft matrix allow MXID`)");
    } else {
        println!("allowed: {}", config.allowed.join(", "));
    }
    for room in rooms {
        println!(
            "room {} ({}{})",
            room["roomId"].as_str().unwrap_or_default(),
            room["kind"].as_str().unwrap_or_default(),
            room["sessionKey"]
                .as_str()
                .map(|k| format!(", session {k}"))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn logout(home: &weft_client::Home, paths: &Paths) -> anyhow::Result<ExitCode> {
    let Some(mut config) = Config::load(paths)?.filter(|c| !c.user.is_empty()) else {
        println!("not logged in");
        return Ok(ExitCode::SUCCESS);
    };
    let token = secret::get(&config.user, Kind::Token)?;
    let passphrase = secret::get(&config.user, Kind::Passphrase)?;
    if let (Some(token), Some(passphrase)) = (token, passphrase) {
        let logged_out = async {
            let client =
                crate::matrix::client(&config.homeserver, &paths.store(), &passphrase).await?;
            crate::matrix::restore(&client, &config.user, &config.device_id, &token).await?;
            client.matrix_auth().logout().await.context("logging out")?;
            anyhow::Ok(())
        };
        if let Err(e) = logged_out.await {
            eprintln!("weft-matrix: the homeserver did not log the device out ({e:#}); its secrets are forgotten here anyway");
        }
    }
    secret::delete(&config.user, Kind::Token)?;
    secret::delete(&config.user, Kind::Passphrase)?;
    if paths.store().exists() {
        std::fs::remove_dir_all(paths.store()).context("removing the store")?;
    }
    let _ = std::fs::remove_file(paths.state());
    println!("logged out {}", config.user);
    // The allow-list and the preferences stay for the next login.
    config.homeserver.clear();
    config.user.clear();
    config.device_id.clear();
    config.verified = false;
    config.save(paths)?;
    reload(home).await;
    Ok(ExitCode::SUCCESS)
}
