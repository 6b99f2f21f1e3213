//! Where a client keeps the tokens of the boxes it remembers: the platform's keyring where it
//! has one that answers (the Secret Service of GNOME or KDE on Linux, the login keychain on
//! macOS, the Credential Manager on Windows), else a file only this user can read:
//!
//! ```text
//! keyring: service "kiln", account "remote HOST:PORT"
//! or
//! <config dir>/kiln/remotes/          (~/.config/kiln/remotes on Linux)
//! └── HOST_PORT.token                 the token, mode 0600 where the platform has modes
//! ```
//!
//! `KILN_KEYRING=off` keeps them in files even where a keyring exists: on a machine reached
//! over SSH, a locked keyring would wait for a password typed on its screen.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use keyring_core::{CredentialStore, Entry};

use super::{BoxAddress, RemoteError, TOKEN_VARIABLE, Token};

/// The environment variable that turns the keyring off (`off`).
pub const KEYRING_VARIABLE: &str = "KILN_KEYRING";

/// The keyring service name tokens are kept under.
const SERVICE: &str = "kiln";

/// Where [`remember_token`] put a token, for the sentence that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// In the platform's keyring.
    Keyring,
    /// In this file, readable by this user only.
    File(PathBuf),
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Keyring => f.write_str("this system's keyring"),
            Self::File(path) => write!(f, "{} (readable by you only)", path.display()),
        }
    }
}

/// The two places a token may be kept, as one client sees them.
struct Keeper {
    keyring: Option<Arc<CredentialStore>>,
    dir: Option<PathBuf>,
}

impl Keeper {
    /// This machine's keyring (unless `KILN_KEYRING=off`) and tokens folder.
    fn platform() -> Self {
        Self {
            keyring: platform_keyring(),
            dir: dirs::config_dir().map(|dir| dir.join("kiln").join("remotes")),
        }
    }

    fn entry(&self, address: &BoxAddress) -> Option<Entry> {
        let store = self.keyring.as_ref()?;
        Entry::new_in_store(store, SERVICE, &format!("remote {address}")).ok()
    }

    fn file(&self, address: &BoxAddress) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(token_file_name(address)))
    }

    /// The token remembered for `address`: the keyring's, else the file's.
    fn token(&self, address: &BoxAddress) -> Result<Token, RemoteError> {
        // A keyring that does not answer (no Secret Service running) is no keyring.
        if let Some(text) = self.entry(address).and_then(|e| e.get_password().ok()) {
            return Token::new(&text);
        }
        match self.file(address) {
            Some(path) if path.is_file() => Token::read(&path),
            _ => Err(RemoteError::NoToken {
                address: address.clone(),
            }),
        }
    }

    /// Keeps `token` for `address` in the keyring, or in a private file when the keyring
    /// refuses; an older file is removed once the keyring holds the token.
    fn remember(&self, address: &BoxAddress, token: &Token) -> Result<Kept, RemoteError> {
        if let Some(entry) = self.entry(address)
            && entry.set_password(token.reveal()).is_ok()
        {
            if let Some(path) = self.file(address) {
                let _ = std::fs::remove_file(path);
            }
            return Ok(Kept::Keyring);
        }
        let path = self.file(address).ok_or(RemoteError::NoConfigDir)?;
        write_private(&path, token.reveal()).map(Kept::File)
    }
}

/// The platform's keyring, opened once per process; none where it has none, where it cannot be
/// reached, or where `KILN_KEYRING=off`.
fn platform_keyring() -> Option<Arc<CredentialStore>> {
    static KEYRING: OnceLock<Option<Arc<CredentialStore>>> = OnceLock::new();
    KEYRING
        .get_or_init(|| {
            if std::env::var(KEYRING_VARIABLE).is_ok_and(|v| v.trim().eq_ignore_ascii_case("off")) {
                return None;
            }
            open_platform_keyring()
        })
        .clone()
}

#[cfg(all(target_os = "linux", not(test)))]
fn open_platform_keyring() -> Option<Arc<CredentialStore>> {
    let store: Arc<CredentialStore> = zbus_secret_service_keyring_store::Store::new().ok()?;
    Some(store)
}

#[cfg(all(target_os = "macos", not(test)))]
fn open_platform_keyring() -> Option<Arc<CredentialStore>> {
    let store: Arc<CredentialStore> = apple_native_keyring_store::keychain::Store::new().ok()?;
    Some(store)
}

#[cfg(all(target_os = "windows", not(test)))]
fn open_platform_keyring() -> Option<Arc<CredentialStore>> {
    let store: Arc<CredentialStore> = windows_native_keyring_store::Store::new().ok()?;
    Some(store)
}

/// Unit tests never touch the keyring of the person running them.
#[cfg(any(
    test,
    not(any(target_os = "linux", target_os = "macos", target_os = "windows"))
))]
fn open_platform_keyring() -> Option<Arc<CredentialStore>> {
    None
}

/// The token to present to `address`: `KILN_REMOTE_TOKEN`, else the one remembered for it.
pub fn token_for(address: &BoxAddress) -> Result<Token, RemoteError> {
    if let Ok(text) = std::env::var(TOKEN_VARIABLE) {
        return Token::new(&text);
    }
    Keeper::platform().token(address)
}

/// Keeps `token` for `address` where this user alone can read it (see the module docs) and
/// says where.
pub fn remember_token(address: &BoxAddress, token: &Token) -> Result<Kept, RemoteError> {
    Keeper::platform().remember(address, token)
}

/// Writes `text` to `path` so that only this user can read it: on Unix the file is created with
/// mode 0600 before a byte is in it, and written whole through a temporary file.
fn write_private(path: &Path, text: &str) -> Result<PathBuf, RemoteError> {
    use std::io::Write;
    let failed = |e: std::io::Error| RemoteError::TokenFile {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let partial = path.with_extension("token.partial");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&partial).map_err(failed)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(failed)?;
    std::fs::rename(&partial, path).map_err(failed)?;
    Ok(path.to_owned())
}

/// The file name the token of the box at `address` is kept under: the address with the
/// characters a file system may refuse (`:` of IPv6, `/`) replaced.
fn token_file_name(address: &BoxAddress) -> String {
    let host: String = address
        .host
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => c,
            _ => '_',
        })
        .collect();
    format!("{host}_{}.token", address.port)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kiln-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn keeper(keyring: Option<Arc<CredentialStore>>, dir: &Path) -> Keeper {
        Keeper {
            keyring,
            dir: Some(dir.to_owned()),
        }
    }

    #[test]
    fn without_a_keyring_a_token_is_kept_in_a_file_for_its_owner_alone() {
        let dir = scratch("remember");
        let address: BoxAddress = "[fe80::1]:7340".parse().unwrap();
        let kept = keeper(None, &dir)
            .remember(&address, &Token::new("s3cret").unwrap())
            .unwrap();
        let Kept::File(path) = kept else {
            panic!("{kept:?}")
        };
        assert_eq!(
            path.file_name().unwrap().to_str().unwrap(),
            "fe80__1_7340.token"
        );
        assert_eq!(
            keeper(None, &dir).token(&address).unwrap().reveal(),
            "s3cret"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn with_a_keyring_a_token_is_kept_there_and_no_file_is_left() {
        let dir = scratch("keyring");
        let address: BoxAddress = "gpu-box.lan:7340".parse().unwrap();
        let store: Arc<CredentialStore> = keyring_core::mock::Store::new().unwrap();
        // A file from before the keyring was there: the keyring's token replaces it.
        keeper(None, &dir)
            .remember(&address, &Token::new("old").unwrap())
            .unwrap();
        let with_keyring = keeper(Some(store.clone()), &dir);
        let kept = with_keyring
            .remember(&address, &Token::new("s3cret").unwrap())
            .unwrap();
        assert_eq!(kept, Kept::Keyring);
        assert!(!with_keyring.file(&address).unwrap().exists());
        assert_eq!(with_keyring.token(&address).unwrap().reveal(), "s3cret");
        let other: BoxAddress = "other:7340".parse().unwrap();
        let error = with_keyring.token(&other).unwrap_err();
        assert!(matches!(error, RemoteError::NoToken { .. }), "{error:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_token_file_left_from_before_the_keyring_is_still_read() {
        let dir = scratch("migrate");
        let address: BoxAddress = "box:7340".parse().unwrap();
        keeper(None, &dir)
            .remember(&address, &Token::new("from-file").unwrap())
            .unwrap();
        let store: Arc<CredentialStore> = keyring_core::mock::Store::new().unwrap();
        let token = keeper(Some(store), &dir).token(&address).unwrap();
        assert_eq!(token.reveal(), "from-file");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
