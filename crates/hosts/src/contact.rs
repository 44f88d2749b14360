//! First contact: what the host is, and a `weft` of this version put there.
//!
//! Two ssh commands, each plain words on the command line (see the crate's comment):
//!
//! 1. `/bin/sh -s` with [`probe_script`] on stdin: the host's OS, architecture, uid,
//!    `$HOME` and the SHA-256 of `~/.local/share/weft/<version>/weft` if one is there.
//!    When the host is one this binary runs on and the user is not root, it also
//!    writes a small installer beside it.
//! 2. Only when that binary is missing or another: `/bin/sh <that installer> <hash>
//!    weft` with this binary on stdin. The installer writes it to a temporary name,
//!    checks its hash and that it runs, then renames it into place, so a daemon
//!    running the old file keeps it and nobody ever runs half a binary. The sandbox's
//!    Landlock helper (`weft-sandbox-exec`), which must sit beside `weft`, follows the
//!    same way when it is beside this one.
//!
//! The binary cannot follow the probe script on one stdin: `dash` (Debian's `/bin/sh`)
//! reads a script from a pipe in blocks, so a `cat` in the script would miss the
//! binary's first bytes. Nothing goes over SFTP, which bastions often jail.

use std::io::Read as _;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use sha2::Digest;
use tokio::io::AsyncWriteExt;

use crate::list::Installed;
use crate::{plain_word, HostError, Ssh};

/// How long a probe or an install may take (a big binary over a slow link).
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// What the probe found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Probe {
    /// `uname -s`.
    pub os: String,
    /// `uname -m`.
    pub arch: String,
    /// `id -u`.
    pub uid: String,
    /// `$HOME`.
    pub home: String,
    /// The SHA-256 of the `weft` of this version there, if one is.
    pub sha256: Option<String>,
    /// The SHA-256 of the sandbox helper beside it, if one is.
    pub helper_sha256: Option<String>,
}

/// The sandbox's helper, which the daemon looks for beside `weft`.
pub const HELPER: &str = "weft-sandbox-exec";

/// What `uname -s` / `uname -m` say on a machine this binary runs on.
pub fn this_platform() -> (&'static str, &'static str) {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        other => other,
    };
    (os, std::env::consts::ARCH)
}

/// The probe, for `version`'s folder.
pub fn probe_script(version: &str) -> String {
    let (os, arch) = this_platform();
    format!(
        r#"v='{version}'
d="$HOME/.local/share/weft/$v"
os=$(uname -s)
arch=$(uname -m)
uid=$(id -u)
echo weft-probe-begin
echo "os=$os"
echo "arch=$arch"
echo "uid=$uid"
echo "home=$HOME"
for f in weft {helper}; do
  if [ -f "$d/$f" ]; then
    if command -v sha256sum >/dev/null 2>&1; then s=$(sha256sum "$d/$f" | cut -d' ' -f1)
    else s=$(shasum -a 256 "$d/$f" | cut -d' ' -f1); fi
    echo "$f=$s"
  fi
done
if [ "$os" = '{os}' ] && [ "$arch" = '{arch}' ] && [ "$uid" != 0 ]; then
  mkdir -p "$d" && cat > "$d/install.sh" <<'WEFT_INSTALLER'
{installer}WEFT_INSTALLER
fi
echo weft-probe-end
"#,
        installer = installer_script(version),
        helper = HELPER,
    )
}

/// The installer: a file on stdin, its expected hash as `$1`, its name (`weft` or the
/// helper) as `$2`; only `weft` is run to check it.
fn installer_script(version: &str) -> String {
    format!(
        r#"set -eu
d="$HOME/.local/share/weft/{version}"
case "$2" in weft|{helper}) ;; *) echo "weft-install-bad name"; exit 2;; esac
tmp="$d/.$2.$$"
trap 'rm -f "$tmp"' EXIT
cat > "$tmp"
chmod 755 "$tmp"
if command -v sha256sum >/dev/null 2>&1; then got=$(sha256sum "$tmp" | cut -d' ' -f1)
else got=$(shasum -a 256 "$tmp" | cut -d' ' -f1); fi
if [ "$got" != "$1" ]; then echo "weft-install-bad $got"; exit 3; fi
if [ "$2" = weft ] && ! "$tmp" --version >/dev/null 2>&1; then echo "weft-install-norun $("$tmp" --version 2>&1 | head -n 3)"; exit 4; fi
mv -f "$tmp" "$d/$2"
echo "weft-install-ok $got"
"#,
        helper = HELPER,
    )
}

/// Reads the probe's answer from between its markers (a login shell's rc files may
/// print banners around it).
pub fn parse_probe(out: &str) -> Option<Probe> {
    let start = out.find("weft-probe-begin\n")? + "weft-probe-begin\n".len();
    let end = out[start..].find("weft-probe-end")? + start;
    let mut probe = Probe::default();
    for line in out[start..end].lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().to_string();
        match k {
            "os" => probe.os = v,
            "arch" => probe.arch = v,
            "uid" => probe.uid = v,
            "home" => probe.home = v,
            "weft" if !v.is_empty() => probe.sha256 = Some(v),
            HELPER if !v.is_empty() => probe.helper_sha256 = Some(v),
            _ => {}
        }
    }
    Some(probe)
}

/// The SHA-256 (hex) of the file at `path`.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_of(std::fs::File::open(path)?)
}

/// The SHA-256 (hex) of what `file` reads from where it stands.
fn sha256_of(mut file: std::fs::File) -> std::io::Result<String> {
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Which local binary this is, cheaply: its size and modification time.
pub fn local_id(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)?;
    Ok(format!(
        "{}:{}.{}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    ))
}

/// Runs `cmd` with `stdin`, within `limit`: its stdout, or why it failed.
async fn run(
    host: &str,
    mut cmd: tokio::process::Command,
    stdin: Stdio,
    script: Option<&str>,
    limit: Duration,
) -> Result<(String, i32), HostError> {
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| HostError::Unreachable {
        host: host.to_string(),
        why: format!("cannot run ssh: {e}"),
    })?;
    if let (Some(script), Some(mut input)) = (script, child.stdin.take()) {
        // A host that fails before reading it closes the pipe: its stderr says why.
        let _ = input.write_all(script.as_bytes()).await;
        drop(input);
    }
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| HostError::Unreachable {
            host: host.to_string(),
            why: format!("no answer within {} s", limit.as_secs()),
        })??;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let code = out.status.code().unwrap_or(-1);
    if code == 255 {
        // ssh's own failure: not reached, refused, or a host key that changed.
        return Err(HostError::Unreachable {
            host: host.to_string(),
            why: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok((stdout, code))
}

/// Probes `destination` (named `host`).
pub async fn probe(ssh: &Ssh, host: &str, destination: &str) -> Result<Probe, HostError> {
    let script = probe_script(weft_client::VERSION);
    let cmd = ssh.command(destination, &["/bin/sh", "-s"]);
    let (out, code) = run(host, cmd, Stdio::piped(), Some(&script), PROBE_TIMEOUT).await?;
    parse_probe(&out).ok_or_else(|| HostError::Unreachable {
        host: host.to_string(),
        why: format!(
            "the host's /bin/sh did not run Weft's probe (exit {code}); its output began: {:?}",
            out.chars().take(200).collect::<String>()
        ),
    })
}

/// Checks that `probe`'s host can run this binary.
fn check_platform(host: &str, probe: &Probe) -> Result<(), HostError> {
    let (os, arch) = this_platform();
    if probe.os != os || probe.arch != arch {
        return Err(HostError::Platform(format!(
            "host {host} runs {} on {}, and this weft is built for {os} on {arch}: it cannot \
             copy itself there. Install Weft {v} on {host} for {} {} yourself (build it there \
             with `cargo build --release -p weft-cli`) as ~/.local/share/weft/{v}/weft, then \
             run `weft hosts add` again",
            probe.os,
            probe.arch,
            probe.os,
            probe.arch,
            v = weft_client::VERSION,
        )));
    }
    if probe.uid == "0" {
        return Err(HostError::Install {
            host: host.to_string(),
            why: "the destination logs in as root, and Weft installs nothing as root: \
                  add the host with a normal user (`user@host`)"
                .into(),
        });
    }
    if !plain_word(&probe.home) {
        return Err(HostError::Install {
            host: host.to_string(),
            why: format!(
                "its $HOME ({:?}) has characters a login shell may read differently",
                probe.home
            ),
        });
    }
    Ok(())
}

/// What first contact did.
#[derive(Debug, Clone)]
pub struct Contact {
    /// What the host is.
    pub probe: Probe,
    /// The binary now there.
    pub installed: Installed,
    /// Whether it was copied (false: the same one was there).
    pub copied: bool,
}

/// First contact with `destination`: probe it and put `exe` (this `weft`) there when
/// the same one is not there yet.
pub async fn contact(
    ssh: &Ssh,
    host: &str,
    destination: &str,
    exe: &Path,
) -> Result<Contact, HostError> {
    let probe = probe(ssh, host, destination).await?;
    check_platform(host, &probe)?;
    let local = local_id(exe)?;
    let (exe_file, want) = hash(exe).await?;
    let installed = Installed {
        version: weft_client::VERSION.to_string(),
        sha256: want.clone(),
        local,
    };
    let mut copied = false;
    if probe.sha256.as_deref() != Some(want.as_str()) {
        install(ssh, host, destination, &probe.home, exe_file, "weft", &want).await?;
        copied = true;
    }
    // The sandbox's Landlock helper goes beside `weft` when there is one beside us.
    if let Some(helper) = exe.parent().map(|d| d.join(HELPER)).filter(|h| h.is_file()) {
        let (file, want) = hash(&helper).await?;
        if probe.helper_sha256.as_deref() != Some(want.as_str()) {
            install(ssh, host, destination, &probe.home, file, HELPER, &want).await?;
            copied = true;
        }
    }
    Ok(Contact {
        probe,
        installed,
        copied,
    })
}

/// `path` opened, with its SHA-256 (read off the async threads), rewound: what is
/// copied is what was hashed even if the file is replaced meanwhile (a rebuild links a
/// new file in its place; the open one stays as it was).
async fn hash(path: &Path) -> Result<(std::fs::File, String), HostError> {
    use std::io::Seek as _;
    let mut file = std::fs::File::open(path)?;
    let reader = file.try_clone()?;
    let sum = tokio::task::spawn_blocking(move || sha256_of(reader))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
    file.rewind()?;
    Ok((file, sum))
}

/// Copies what `file` reads to the host's `~/.local/share/weft/<version>/<name>` through the
/// installer the probe wrote, which checks it against `want`.
async fn install(
    ssh: &Ssh,
    host: &str,
    destination: &str,
    home: &str,
    file: std::fs::File,
    name: &str,
    want: &str,
) -> Result<(), HostError> {
    let installer = format!(
        "{home}/.local/share/weft/{}/install.sh",
        weft_client::VERSION
    );
    let cmd = ssh.command(destination, &["/bin/sh", &installer, want, name]);
    let (out, code) = run(host, cmd, file.into(), None, INSTALL_TIMEOUT).await?;
    let said = out.lines().last().unwrap_or_default().to_string();
    if code == 0 && said == format!("weft-install-ok {want}") {
        return Ok(());
    }
    let why = if let Some(got) = said.strip_prefix("weft-install-bad ") {
        format!("the copy of {name}'s SHA-256 there is {got}, not {want}")
    } else if let Some(why) = said.strip_prefix("weft-install-norun ") {
        format!("the copied weft does not run there: {why}")
    } else {
        format!("the installer of {name} exited {code}: {said:?}")
    };
    Err(HostError::Install {
        host: host.to_string(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_read_between_its_markers_whatever_a_login_banner_says() {
        let out = "Welcome to gpu!\nos=Nope\nweft-probe-begin\nos=Linux\narch=aarch64\nuid=1000\n\
                   home=/home/me\nweft=abc\nweft-sandbox-exec=def\nweft-probe-end\nbye\n";
        let p = parse_probe(out).unwrap_or_else(|| panic!("not parsed"));
        assert_eq!(
            p,
            Probe {
                os: "Linux".into(),
                arch: "aarch64".into(),
                uid: "1000".into(),
                home: "/home/me".into(),
                sha256: Some("abc".into()),
                helper_sha256: Some("def".into()),
            }
        );
        assert!(parse_probe("os=Linux\n").is_none());
    }

    #[test]
    fn another_architecture_is_named_with_how_to_install_there() {
        let (os, _) = this_platform();
        let probe = Probe {
            os: os.into(),
            arch: "riscv64".into(),
            uid: "1000".into(),
            home: "/home/me".into(),
            sha256: None,
            helper_sha256: None,
        };
        let e = check_platform("gpu", &probe)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("host gpu runs Linux on riscv64"), "{e}");
        assert!(e.contains("~/.local/share/weft/"), "{e}");
        let root = Probe {
            arch: std::env::consts::ARCH.into(),
            uid: "0".into(),
            ..probe
        };
        let e = check_platform("gpu", &root)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("installs nothing as root"), "{e}");
    }

    #[test]
    fn the_hash_is_sha256() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let f = dir.path().join("f");
        std::fs::write(&f, b"abc").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            sha256_file(&f).unwrap_or_default(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
