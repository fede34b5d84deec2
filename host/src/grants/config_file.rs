//! The grants of one `skillhost.toml` file: whether it grants a skill,
//! and setting or removing one skill's grant while the rest of the file
//! (comments included) stays as it was. `config` reads the grants with
//! everything else; this is the one place that writes them.

use std::fs;
use std::path::{Path, PathBuf};

use super::Grant;

/// What reading or writing a grant in a config file ran into; each names
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum GrantFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The text of the file at `path`; a missing file is empty.
fn read_text(path: &Path) -> Result<Option<String>, GrantFileError> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(GrantFileError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Whether the config file at `path` itself (not merged) grants `skill`.
pub fn file_grants(path: &Path, skill: &str) -> Result<bool, GrantFileError> {
    let Some(text) = read_text(path)? else {
        return Ok(false);
    };
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| GrantFileError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    Ok(table.get("grants").is_some_and(|g| g.get(skill).is_some()))
}

/// Sets or removes one skill's grant in a config file, keeping the rest of
/// the file (comments included) as it was.
pub fn write_grant(path: &Path, skill: &str, grant: Option<&Grant>) -> Result<(), GrantFileError> {
    let text = read_text(path)?.unwrap_or_default();
    let edited = with_grant(&text, path, skill, grant)?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| GrantFileError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    crate::fsutil::write_atomic(path, edited.as_bytes()).map_err(|source| GrantFileError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// `text` (the config file at `path`) with `skill`'s grant set or removed,
/// the rest kept as it was: what [`write_grant`] writes.
#[doc(hidden)]
pub fn with_grant(
    text: &str,
    path: &Path,
    skill: &str,
    grant: Option<&Grant>,
) -> Result<String, GrantFileError> {
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| GrantFileError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
    let grants = doc
        .entry("grants")
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| GrantFileError::Invalid {
            path: path.to_path_buf(),
            message: "`grants` must be a table".into(),
        })?;
    match grant {
        Some(g) => {
            let value = toml::to_string(g).map_err(|e| GrantFileError::Invalid {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
            let table: toml_edit::DocumentMut =
                value
                    .parse()
                    .map_err(|e: toml_edit::TomlError| GrantFileError::Parse {
                        path: path.to_path_buf(),
                        message: e.to_string(),
                    })?;
            grants.insert(skill, toml_edit::Item::Table(table.as_table().clone()));
        }
        None => {
            grants.remove(skill);
        }
    }
    let edited = doc.to_string();
    reads_back(&edited, path, skill, grant)?;
    Ok(edited)
}

/// Whether `text` reads back with exactly `grant` for `skill` (or none):
/// a name the TOML library gives a meaning of its own (`$__toml_private_
/// datetime`, found by fuzzing) would otherwise be written into a file
/// that no later command could read.
fn reads_back(
    text: &str,
    path: &Path,
    skill: &str,
    grant: Option<&Grant>,
) -> Result<(), GrantFileError> {
    let refused = |why: String| GrantFileError::Invalid {
        path: path.to_path_buf(),
        message: format!("the grant of `{skill}` cannot be written there: {why}"),
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| refused(format!("the file would not read back ({e})")))?;
    let written = table.get("grants").and_then(|g| g.get(skill)).cloned();
    let read = written
        .map(|v| v.try_into::<Grant>())
        .transpose()
        .map_err(|e| refused(format!("it would not read back ({e})")))?;
    if read.as_ref() != grant {
        return Err(refused("it would read back as another grant".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (`config_toml`): a skill named as the TOML
    /// library's own datetime key would have made skillhost.toml unreadable
    /// for every later command. The grant is refused, the file untouched.
    #[test]
    fn a_grant_the_file_could_not_read_back_is_refused_and_nothing_written() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("skillhost.toml");
        std::fs::write(&path, "[limits]\nmemory_mb = 10\n").expect("write");
        let e = write_grant(&path, "$__toml_private_datetime", Some(&Grant::default()))
            .expect_err("refused");
        assert!(e.to_string().contains("cannot be written"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "[limits]\nmemory_mb = 10\n"
        );
        write_grant(&path, "mailer", Some(&Grant::default())).expect("an ordinary name");
    }
}
