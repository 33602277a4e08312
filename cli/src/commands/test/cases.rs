//! The cases file: what `rekon test` reads, checked and made into cases.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, anyhow, bail};
use chrono::{DateTime, Utc};
use rekon_host::contract::{ObjectRef, Reason};
use rekon_host::names::object_ref_of;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::render::flow;

/// A cases file, read and checked.
pub(super) struct CasesFile {
    pub(super) path: PathBuf,
    pub(super) module: PathBuf,
    pub(super) cases: Vec<Case>,
}

/// One case, checked.
pub(super) struct Case {
    pub(super) name: String,
    /// Whether its objects' conversion round trips are checked
    /// (`roundTrip: false` opts out).
    pub(super) round_trip: bool,
    pub(super) objects: Vec<Value>,
    pub(super) request: CaseRequest,
    pub(super) expect: Expect,
}

/// What a case reconciles.
pub(super) struct CaseRequest {
    pub(super) target: Target,
    pub(super) reason: Option<Reason>,
    pub(super) deleting: bool,
    pub(super) time: Option<DateTime<Utc>>,
}

pub(super) enum Target {
    /// An object added to the cluster.
    Object(Value),
    /// An object named: in `objects`, or absent.
    Ref(ObjectRef),
}

/// What a case expects.
pub(super) struct Expect {
    pub(super) result: ExpectedResult,
    pub(super) present: Vec<(ObjectRef, Value)>,
    pub(super) absent: Vec<ObjectRef>,
    pub(super) events: Option<Vec<Value>>,
    pub(super) refused: Option<Vec<Value>>,
}

pub(super) enum ExpectedResult {
    /// Anything but an error (`result` omitted).
    NotError,
    Done,
    RequeueAfter(u64),
    Error {
        message: String,
        retry: Option<bool>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) module: Option<PathBuf>,
    pub(super) cases: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawCase {
    pub(super) name: String,
    #[serde(default)]
    pub(super) round_trip: Option<bool>,
    #[serde(default)]
    pub(super) objects: Vec<Value>,
    pub(super) request: Value,
    #[serde(default)]
    pub(super) expect: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequest {
    pub(super) object: Option<Value>,
    #[serde(rename = "ref")]
    pub(super) reference: Option<RawRef>,
    pub(super) reason: Option<String>,
    #[serde(default)]
    pub(super) deleting: bool,
    pub(super) time: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawRef {
    pub(super) api_version: String,
    pub(super) kind: String,
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpect {
    pub(super) result: Option<Value>,
    #[serde(default)]
    pub(super) present: Vec<Value>,
    #[serde(default)]
    pub(super) absent: Vec<Value>,
    pub(super) events: Option<Vec<ExpectedEvent>>,
    pub(super) refused: Option<Vec<ExpectedRefusal>>,
}

/// An Event a case expects: the fields given must match.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectedEvent {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(super) type_: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) regarding: Option<Value>,
}

/// A refused host call a case expects: the fields given must match.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ExpectedRefusal {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) verb: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) code: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<String>,
}

impl CasesFile {
    /// Reads and checks `path`; `module` overrides the module it names.
    pub(super) fn read(path: &Path, module: Option<&Path>) -> anyhow::Result<CasesFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let raw: RawFile = serde_yaml_ng::from_str(&text)
            .with_context(|| format!("{} is not a cases file", path.display()))?;
        let module = match (module, raw.module) {
            (Some(module), _) => module.to_path_buf(),
            (None, Some(relative)) => path
                .parent()
                .unwrap_or_else(|| Path::new(""))
                .join(relative),
            (None, None) => bail!(
                "{} names no module: add `module: PATH` (relative to the file) or pass --module",
                path.display()
            ),
        };
        let mut cases = Vec::new();
        for (index, case) in raw.cases.into_iter().enumerate() {
            let label = match case["name"].as_str() {
                Some(name) => format!("{}: case {:?}", path.display(), name),
                None => format!("{}: case {}", path.display(), index + 1),
            };
            cases.push(Case::parse(case).with_context(|| label)?);
        }
        let mut names = std::collections::HashSet::new();
        if let Some(twice) = cases.iter().find(|c| !names.insert(&c.name)) {
            bail!("{}: two cases are named {:?}", path.display(), twice.name);
        }
        Ok(CasesFile {
            path: path.to_path_buf(),
            module,
            cases,
        })
    }
}

impl Case {
    pub(super) fn parse(value: Value) -> anyhow::Result<Case> {
        let raw: RawCase = serde_json::from_value(value)?;
        if raw.name.trim().is_empty() {
            bail!("the name is empty");
        }
        let request: RawRequest = serde_json::from_value(raw.request).context("request")?;
        let expect: RawExpect = match raw.expect {
            Some(expect) => serde_json::from_value(expect).context("expect")?,
            None => RawExpect::default(),
        };
        for (index, object) in raw.objects.iter().enumerate() {
            identity(object).with_context(|| format!("objects[{index}]"))?;
        }
        let target = match (request.object, request.reference) {
            (Some(object), None) => {
                identity(&object).context("request.object")?;
                Target::Object(object)
            }
            (None, Some(r)) => Target::Ref(
                object_ref_of(&json!({
                    "apiVersion": r.api_version,
                    "kind": r.kind,
                    "metadata": {"name": r.name, "namespace": r.namespace},
                }))
                .context("request.ref needs apiVersion, kind and name")?,
            ),
            _ => bail!("request needs one of `object` (an object) and `ref` (a reference)"),
        };
        let reason = request
            .reason
            .as_deref()
            .map(|r| {
                rekon_host::contract::reason_of(r).with_context(|| {
                    format!(
                        "request.reason: unknown reason {r:?} (one of {})",
                        rekon_host::contract::REASONS
                            .map(rekon_host::contract::reason_name)
                            .join(", ")
                    )
                })
            })
            .transpose()?;
        let time = request
            .time
            .as_deref()
            .map(|t| {
                DateTime::parse_from_rfc3339(t)
                    .map(|t| t.with_timezone(&Utc))
                    .with_context(|| {
                        format!("request.time: {t:?} is not an RFC 3339 time such as 2026-01-01T00:00:00Z")
                    })
            })
            .transpose()?;
        let named = |list: Vec<Value>, what: &str| -> anyhow::Result<Vec<(ObjectRef, Value)>> {
            list.into_iter()
                .enumerate()
                .map(|(index, object)| {
                    let target =
                        identity(&object).with_context(|| format!("expect.{what}[{index}]"))?;
                    Ok((target, object))
                })
                .collect()
        };
        Ok(Case {
            name: raw.name,
            round_trip: raw.round_trip.unwrap_or(true),
            objects: raw.objects,
            request: CaseRequest {
                target,
                reason,
                deleting: request.deleting,
                time,
            },
            expect: Expect {
                result: match &expect.result {
                    None => ExpectedResult::NotError,
                    Some(value) => expected_result(value).context("expect.result")?,
                },
                present: named(expect.present, "present")?,
                absent: named(expect.absent, "absent")?
                    .into_iter()
                    .map(|(target, _)| target)
                    .collect(),
                events: expect.events.map(to_values).transpose()?,
                refused: expect.refused.map(to_values).transpose()?,
            },
        })
    }
}

pub(super) fn to_values<T: Serialize>(list: Vec<T>) -> anyhow::Result<Vec<Value>> {
    list.iter().map(|e| Ok(serde_json::to_value(e)?)).collect()
}

/// The reference an object is named by (apiVersion, kind, metadata.name,
/// metadata.namespace).
pub(super) fn identity(object: &Value) -> anyhow::Result<ObjectRef> {
    object_ref_of(object).ok_or_else(|| {
        anyhow!(
            "an object needs apiVersion, kind and metadata.name, got {}",
            flow(object)
        )
    })
}

pub(super) fn expected_result(value: &Value) -> anyhow::Result<ExpectedResult> {
    const FORMS: &str = "write `done`, `{requeueAfter: 30s}` or `{error: \"part of the message\"}`";
    let map = match value {
        Value::String(s) if s == "done" => return Ok(ExpectedResult::Done),
        Value::Object(map) => map,
        other => bail!("{} is not a result: {FORMS}", flow(other)),
    };
    if let Some(after) = map.get("requeueAfter") {
        if map.len() > 1 {
            bail!("requeueAfter stands alone: {FORMS}");
        }
        let ms = after.as_str().and_then(duration_ms).with_context(|| {
            format!(
                "requeueAfter: {} is not a duration such as 30s, 1500ms or 2m",
                flow(after)
            )
        })?;
        return Ok(ExpectedResult::RequeueAfter(ms));
    }
    if let Some(message) = map.get("error") {
        let message = message
            .as_str()
            .with_context(|| format!("error: {} is not text", flow(message)))?;
        let retry = match map.get("retry") {
            None => None,
            Some(Value::Bool(retry)) => Some(*retry),
            Some(other) => bail!("retry: {} is not true or false", flow(other)),
        };
        if let Some(extra) = map
            .keys()
            .find(|k| !["error", "retry"].contains(&k.as_str()))
        {
            bail!("unknown field {extra:?} beside error");
        }
        return Ok(ExpectedResult::Error {
            message: message.to_string(),
            retry,
        });
    }
    bail!("{} is not a result: {FORMS}", flow(value))
}

/// `30s`, `1500ms`, `2m`, `1h`, `1m30s` in milliseconds.
pub(super) fn duration_ms(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return None,
        };
        total = total.checked_add(number.checked_mul(factor)?)?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

/// A delay as a person writes it: `30s`, `2m`, `1500ms`.
pub(super) fn format_ms(ms: u64) -> String {
    match ms {
        0 => "0s".to_string(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::{duration_ms, format_ms};

    #[test]
    fn durations_read_and_print_as_people_write_them() {
        assert_eq!(duration_ms("30s"), Some(30_000));
        assert_eq!(duration_ms("1m30s"), Some(90_000));
        assert_eq!(duration_ms("1500ms"), Some(1500));
        assert_eq!(duration_ms("2h"), Some(7_200_000));
        assert_eq!(duration_ms("30"), None);
        assert_eq!(duration_ms("s"), None);
        assert_eq!(format_ms(30_000), "30s");
        assert_eq!(format_ms(120_000), "2m");
        assert_eq!(format_ms(1500), "1500ms");
    }
}
