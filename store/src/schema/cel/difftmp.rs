//! Temporary differential harness (removed after use).
#[test]
#[ignore]
fn dump() {
    let dir = std::env::var("CELDIFF").expect("dir");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/schema.json")).unwrap())
            .unwrap();
    let rules: Vec<String> = std::fs::read_to_string(format!("{dir}/rules.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    let mut schema = schema;
    schema["x-kubernetes-validations"] = serde_json::Value::Array(
        rules
            .iter()
            .map(|r| serde_json::json!({"rule": r}))
            .collect(),
    );
    let root = serde_json::json!({"type": "object", "properties": {"spec": schema}});
    let s = crate::schema::Schema::from_json(&root);
    let base = crate::field::Path::new(["spec", "validation", "openAPIV3Schema"]);
    let mut out = serde_json::Map::new();
    if let Err(errors) = super::compile(&s, &base) {
        for e in errors {
            let f = e.field.to_string();
            let idx = f
                .split("x-kubernetes-validations[")
                .nth(1)
                .and_then(|r| r.split(']').next())
                .unwrap_or("other")
                .to_string();
            let field = f.rsplit('.').next().unwrap().to_string();
            out.entry(idx).or_insert_with(|| serde_json::json!([])).as_array_mut().unwrap().push(serde_json::json!({"reason": e.kind.reason(), "field": field, "message": e.body()}));
        }
    }
    std::fs::write(
        format!("{dir}/mine.json"),
        serde_json::to_string_pretty(&serde_json::json!({"results": out})).unwrap(),
    )
    .unwrap();
}

#[test]
#[ignore]
fn dump_runtime() {
    let dir = std::env::var("CELDIFF").expect("dir");
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/case.json")).unwrap())
            .unwrap();
    let s = crate::schema::Schema::from_json(&case["root"]);
    let base = crate::field::Path::new(["spec", "validation", "openAPIV3Schema"]);
    let rules = match super::compile(&s, &base) {
        Ok(r) => r,
        Err(e) => panic!("{e:?}"),
    };
    let mut results = Vec::new();
    for (si, seq) in case["steps"].as_array().unwrap().iter().enumerate() {
        let mut out = Vec::new();
        let mut old: Option<serde_json::Value> = None;
        for spec in seq.as_array().unwrap() {
            let o = serde_json::json!({"apiVersion": "celtest.example.org/v1", "kind": "X", "metadata": {"name": format!("o{si}")}, "spec": spec});
            let errors = rules.validate(&o, old.as_ref());
            let mut shown: Vec<String> = errors
                .iter()
                .map(|e| format!("{} | {} | {}", e.kind.reason(), e.field, e.body()))
                .collect();
            shown.sort();
            let failed = !shown.is_empty();
            out.push(shown);
            if failed && old.is_none() {
                break;
            }
            if !failed {
                old = Some(o);
            }
        }
        results.push(out);
    }
    std::fs::write(
        format!("{dir}/mine.json"),
        serde_json::to_string_pretty(&results).unwrap(),
    )
    .unwrap();
}

#[test]
#[ignore]
fn cost_debug() {
    let rule = std::env::var("CELRULE").expect("rule");
    let schema = crate::schema::Schema::from_json(&serde_json::from_str(&std::fs::read_to_string("/tmp/celx/diff/schema.json").unwrap()).unwrap());
    let ty = super::types::decl_type(&schema, false, "selfType1").unwrap();
    let bounds = super::sizes::bounds(&schema, false).unwrap();
    let r = crate::schema::Rule { rule, ..Default::default() };
    let c = super::rule::compile(&r, &ty, &schema, Some(&bounds));
    eprintln!("cost={} error={:?} min={}", c.cost, c.error, bounds.min);
}

#[test]
#[ignore]
fn dump_schema() {
    let dir = std::env::var("CELDIFF").expect("dir");
    let root: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{dir}/root.json")).unwrap()).unwrap();
    let s = crate::schema::Schema::from_json(&root);
    let base = crate::field::Path::new(["spec", "validation", "openAPIV3Schema"]);
    let mut out = Vec::new();
    if let Err(errors) = super::compile(&s, &base) {
        for e in errors {
            out.push(format!("{} | {} | {}", e.kind.reason(), e.field, e.body()));
        }
    }
    std::fs::write(format!("{dir}/mine.json"), serde_json::to_string_pretty(&out).unwrap()).unwrap();
}
