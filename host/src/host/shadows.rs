//! The shadows the operator configuration names (`modules.<name>.shadow`),
//! checked at start: a file named there runs only as a shadow. Given to
//! the host as well, or found in a watched directory, it is loaded from
//! there (as a shadow); otherwise the host reads it itself. A file that
//! cannot be read, or that shadows two modules, stops the start.

use std::path::PathBuf;

use super::HostError;
use crate::config::HostConfig;
use crate::loader::origin_is;
use crate::source::Origin;

/// The shadow files to read at start, as (path, bytes): those named by
/// `config` that neither `given` nor a file of `dirs` provides.
pub(super) fn configured_shadows(
    config: &HostConfig,
    given: &[(String, Vec<u8>)],
    dirs: &[PathBuf],
) -> Result<Vec<(String, Vec<u8>)>, HostError> {
    let mut read: Vec<(String, Vec<u8>)> = Vec::new();
    let mut named: Vec<(&str, &str)> = Vec::new();
    for (module, settings) in &config.modules {
        let Some(path) = settings.shadow.as_deref() else {
            continue;
        };
        if let Some((other, _)) = named
            .iter()
            .find(|(_, p)| origin_is(&Origin::Given(p.to_string()), path))
        {
            return Err(HostError::Configuration(format!(
                "{path} is named as the shadow of both module {other:?} and module {module:?}: a version shadows one module"
            )));
        }
        named.push((module, path));
        let provided = given
            .iter()
            .any(|(source, _)| origin_is(&Origin::Given(source.clone()), path))
            || std::fs::canonicalize(path).is_ok_and(|file| {
                dirs.iter().any(|dir| {
                    std::fs::canonicalize(dir).is_ok_and(|dir| file.parent() == Some(&dir))
                })
            });
        if !provided {
            let bytes = std::fs::read(path).map_err(|error| {
                HostError::Configuration(format!(
                    "modules.{module}.shadow: cannot read {path}: {error}"
                ))
            })?;
            read.push((path.to_string(), bytes));
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> HostConfig {
        serde_yaml_ng::from_str(yaml).expect("a configuration")
    }

    #[test]
    fn a_named_shadow_is_read_unless_given_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v2.wasm");
        std::fs::write(&file, b"v2").unwrap();
        let path = file.display().to_string();
        let named = config(&format!("modules:\n  app:\n    shadow: {path}\n"));

        // Named only in the configuration: read here, to be loaded as the
        // shadow.
        let read = configured_shadows(&named, &[], &[]).unwrap();
        assert_eq!(read, vec![(path.clone(), b"v2".to_vec())]);

        // Given as well (spelled another way): loaded from there.
        let spelled = format!("{}/./v2.wasm", dir.path().display());
        let given = vec![(spelled, b"v2".to_vec())];
        assert!(configured_shadows(&named, &given, &[]).unwrap().is_empty());
        // In a watched directory: the directory loads it.
        let dirs = vec![dir.path().to_path_buf()];
        assert!(configured_shadows(&named, &[], &dirs).unwrap().is_empty());

        // Given in memory by an embedder, under a name no file has: no
        // file is read.
        let embedded = config("modules:\n  app:\n    shadow: app-shadow.wasm\n");
        let given = vec![("app-shadow.wasm".to_string(), b"v2".to_vec())];
        assert!(
            configured_shadows(&embedded, &given, &[])
                .unwrap()
                .is_empty()
        );

        // Missing: the start stops, saying which setting.
        let missing = config("modules:\n  app:\n    shadow: /nonexistent/v9.wasm\n");
        let error = configured_shadows(&missing, &[], &[])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("modules.app.shadow: cannot read /nonexistent/v9.wasm"),
            "{error}"
        );

        // One file shadowing two modules: ambiguous.
        let twice = config(&format!(
            "modules:\n  app:\n    shadow: {path}\n  web:\n    shadow: {path}\n"
        ));
        let error = configured_shadows(&twice, &[], &[])
            .unwrap_err()
            .to_string();
        assert!(error.contains("shadow of both module"), "{error}");
    }
}
