//! `rekon new`: a project folder for a new module, in Rust, JavaScript or
//! Python, that builds, passes its own tests, runs in `rekon dev` against
//! its example object and packs, with no edit.
//!
//! Every project has the same shape:
//! - the source: a reconcile that writes the primary's status (a `Ready`
//!   condition) and an Event, applies an owned ConfigMap when asked to own
//!   ConfigMaps, and webhook stubs (`--webhook`: defaulting and validation);
//! - the CRD in the code (Rust: `#[derive(CustomResource)]`; JavaScript
//!   `src/crd.js`; Python `src/crd.py`), shipped inside the component, and
//!   written to `manifests/crd.yaml` by each build;
//! - `manifests/example.yaml`, `tests/cases.yaml` (`rekon test`), a README
//!   and a Makefile: `make build`, `make test`, `make dev`, `make pack`.
//!
//! The templates are in `new/`; `{{name}}` is replaced by a value and
//! `{{#flag}}...{{/flag}}` is kept only when the flag is set.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

mod render;

use crate::common::say;
use render::{crd, owns_js, owns_py, owns_rust, python_literal, render, sdk_dependency};

/// The languages `rekon new` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Lang {
    /// Rust, with the `rekon-sdk` crate.
    Rust,
    /// JavaScript, built with componentize-js (TypeScript declarations included).
    #[value(alias = "js")]
    Javascript,
    /// Python, built with componentize-py.
    #[value(alias = "py")]
    Python,
}

/// `rekon new NAME --lang LANG --kind GROUP/VERSION/KIND`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The module's name (a DNS label, e.g. `guestbook`): its folder and
    /// the name in its manifest.
    name: String,
    /// The language.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The kind it reconciles, `GROUP/VERSION/KIND` (e.g.
    /// `demo.example.com/v1/Guestbook`): its CRD is generated.
    #[arg(long)]
    kind: String,
    /// The kind is cluster-scoped (default: namespaced).
    #[arg(long)]
    cluster_scoped: bool,
    /// A kind it owns, `GROUP/VERSION/KIND` or `VERSION/KIND` for the core
    /// group (e.g. `v1/ConfigMap`, `apps/v1/Deployment`). Repeatable. An
    /// owned ConfigMap is applied by the generated reconcile.
    #[arg(long)]
    owns: Vec<String>,
    /// Add a mutating and a validating webhook (world `operator`).
    #[arg(long)]
    webhook: bool,
    /// The folder to write (default: `./NAME`); it must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Rust: the `rekon-sdk` dependency, as a path to the SDK's folder
    /// (default: the SDK this rekon was built with, when that folder
    /// exists; else the crates.io version).
    #[arg(long)]
    sdk: Option<PathBuf>,
}

/// A kind given on the command line.
#[derive(Clone, Debug)]
struct Kind {
    group: String,
    version: String,
    kind: String,
}

impl Kind {
    fn parse(text: &str, what: &str) -> anyhow::Result<Kind> {
        let parts: Vec<&str> = text.split('/').collect();
        let looks_like_version =
            |v: &str| v.starts_with('v') && v[1..].starts_with(|c: char| c.is_ascii_digit());
        let (group, version, kind) = match parts.as_slice() {
            [version, kind] if looks_like_version(version) => ("", *version, *kind),
            [group, version, kind] => (*group, *version, *kind),
            _ => bail!(
                "{what} {text:?} must be GROUP/VERSION/KIND (or VERSION/KIND for the core group)"
            ),
        };
        let group = if group == "core" { "" } else { group };
        if version.is_empty()
            || !version.starts_with('v')
            || !version
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            bail!("{what} {text:?}: the version must look like v1, v1beta1, v2alpha1");
        }
        if !kind.starts_with(|c: char| c.is_ascii_uppercase())
            || !kind.chars().all(|c| c.is_ascii_alphanumeric())
        {
            bail!("{what} {text:?}: the kind must be CamelCase letters and digits, e.g. Guestbook");
        }
        Ok(Kind {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        })
    }
}

pub(super) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let name = &args.name;
    if !module_name(name) {
        bail!(
            "the name {name:?} must be a DNS label: 1-63 characters of a-z, 0-9 and '-', \
             starting with a letter and ending with a letter or digit"
        );
    }
    let primary = Kind::parse(&args.kind, "--kind")?;
    if !primary.group.contains('.') {
        bail!(
            "--kind {:?}: a custom resource's group must be a domain with a dot, e.g. demo.example.com",
            args.kind
        );
    }
    let owns = args
        .owns
        .iter()
        .map(|o| Kind::parse(o, "--owns"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!("{} exists and is not empty", dir.display());
    }
    let project = Project::new(args, primary, owns)?;
    for (path, text) in project.files(args.lang) {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    say(format!(
        "wrote {} ({:?} module `{name}` reconciling {}): cd {} && make test && make dev",
        dir.display(),
        args.lang,
        project.vars["kind"],
        dir.display()
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// A name the host takes for a module (a DNS label) that also names a
/// crate, a package and a folder: it starts with a letter.
fn module_name(name: &str) -> bool {
    rekon_host::runtime::dns_label(name) && name.starts_with(|c: char| c.is_ascii_lowercase())
}

/// What the templates are filled with.
struct Project {
    vars: BTreeMap<&'static str, String>,
    flags: BTreeMap<&'static str, bool>,
    crd: Value,
    example: Value,
}

impl Project {
    fn new(args: &Args, primary: Kind, owns: Vec<Kind>) -> anyhow::Result<Project> {
        let plural = rekon_host::names::plural_of(&primary.kind);
        let namespaced = !args.cluster_scoped;
        let configmap = owns
            .iter()
            .any(|o| o.group.is_empty() && o.version == "v1" && o.kind == "ConfigMap");
        let mut vars = BTreeMap::new();
        vars.insert("name", args.name.clone());
        vars.insert("crate", args.name.replace('-', "_"));
        vars.insert("group", primary.group.clone());
        vars.insert("version", primary.version.clone());
        vars.insert("kind", primary.kind.clone());
        vars.insert("plural", plural.clone());
        vars.insert(
            "world",
            if args.webhook {
                "operator"
            } else {
                "reconciler"
            }
            .to_string(),
        );
        vars.insert(
            "ns",
            if namespaced {
                "Some(\"default\")"
            } else {
                "None"
            }
            .to_string(),
        );
        vars.insert("owns_rust", owns_rust(&owns));
        vars.insert("owns_js", owns_js(&owns, configmap));
        vars.insert("owns_py", owns_py(&owns, configmap));
        vars.insert("sdk_dependency", sdk_dependency(args.sdk.as_deref())?);
        vars.insert(
            "owns_list",
            if owns.is_empty() {
                "nothing".to_string()
            } else {
                owns.iter()
                    .map(|o| format!("`{}`", o.kind))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        );
        let mut flags = BTreeMap::new();
        flags.insert("webhook", args.webhook);
        flags.insert("namespaced", namespaced);
        flags.insert("configmap", configmap);
        let mut metadata = json!({"name": "example"});
        if namespaced {
            metadata["namespace"] = json!("default");
        }
        let example = json!({
            "apiVersion": format!("{}/{}", primary.group, primary.version),
            "kind": primary.kind,
            "metadata": metadata,
            "spec": {"message": format!("hello from {}", args.name)},
        });
        Ok(Project {
            crd: crd(&primary, &plural, namespaced),
            example,
            vars,
            flags,
        })
    }

    /// The files of the project in `lang`: (path in the folder, text).
    fn files(&self, lang: Lang) -> Vec<(&'static str, String)> {
        let fill = |template: &str| render(template, &self.vars, &self.flags);
        // Each language's build and test, then the tasks they share.
        let makefile = |own: &str| fill(&format!("{own}{}", include_str!("common/tasks.mk")));
        let mut files = vec![
            ("README.md", fill(include_str!("common/README.md"))),
            ("tests/cases.yaml", fill(include_str!("common/cases.yaml"))),
            (".gitignore", fill(include_str!("common/gitignore"))),
            (
                "manifests/example.yaml",
                serde_yaml_ng::to_string(&self.example).expect("YAML of a JSON value"),
            ),
        ];
        let crd_json = serde_json::to_string_pretty(&self.crd).expect("JSON");
        match lang {
            Lang::Rust => files.extend([
                ("Cargo.toml", fill(include_str!("rust/Cargo.toml"))),
                (".cargo/config.toml", fill(include_str!("rust/cargo-config.toml"))),
                ("Makefile", makefile(include_str!("rust/Makefile"))),
                ("src/lib.rs", fill(include_str!("rust/lib.rs"))),
                ("tests/reconcile.rs", fill(include_str!("rust/reconcile_test.rs"))),
            ]),
            Lang::Javascript => files.extend([
                ("package.json", fill(include_str!("javascript/package.json"))),
                ("jsconfig.json", fill(include_str!("javascript/jsconfig.json"))),
                ("Makefile", makefile(include_str!("javascript/Makefile"))),
                ("src/reconciler.js", fill(include_str!("javascript/reconciler.js"))),
                (
                    "src/crd.js",
                    format!(
                        "// @ts-check\n// The CustomResourceDefinition of {kind}, shipped inside the component\n\
                         // (`crds` in reconciler.js). `make build` writes it to manifests/crd.yaml.\n\n\
                         export const CRD = {crd_json};\n",
                        kind = self.vars["kind"]
                    ),
                ),
                ("types/rekon.d.ts", include_str!("../../../../sdk/js/rekon.d.ts").to_string()),
                ("wit/reconciler.wit", include_str!("../../../../wit/reconciler.wit").to_string()),
            ]),
            Lang::Python => files.extend([
                ("requirements.txt", fill(include_str!("python/requirements.txt"))),
                ("Makefile", makefile(include_str!("python/Makefile"))),
                ("src/app.py", fill(include_str!("python/app.py"))),
                (
                    "src/crd.py",
                    format!(
                        "\"\"\"The CustomResourceDefinition of {kind}, shipped inside the component\n\
                         (``crds`` in app.py). ``make build`` writes it to manifests/crd.yaml.\"\"\"\n\n\
                         CRD = {crd}\n",
                        kind = self.vars["kind"],
                        crd = python_literal(&self.crd, 0)
                    ),
                ),
                ("wit/reconciler.wit", include_str!("../../../../wit/reconciler.wit").to_string()),
            ]),
        }
        files
    }
}
