//! `#[derive(CustomResource)]`: reads `#[resource(...)]` and implements
//! `rekon_sdk::crd::CustomResource`, whose `crd()` hands the attributes to
//! the SDK's `Crd` builder. The schema work happens there, at run time; here
//! we only check what can be checked from the tokens, with spans.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, LitBool, LitInt, LitStr, Type};

/// One `printcolumn(...)`.
struct PrinterColumn {
    name: LitStr,
    type_: LitStr,
    json_path: LitStr,
    description: Option<LitStr>,
    format: Option<LitStr>,
    priority: Option<LitInt>,
}

/// `scale(...)`.
struct Scale {
    spec_replicas_path: LitStr,
    status_replicas_path: LitStr,
    label_selector_path: Option<LitStr>,
}

/// Everything `#[resource(...)]` says.
#[derive(Default)]
struct Resource {
    group: Option<LitStr>,
    version: Option<LitStr>,
    kind: Option<LitStr>,
    namespaced: Option<LitBool>,
    status: Option<Type>,
    plural: Option<LitStr>,
    singular: Option<LitStr>,
    short_names: Vec<LitStr>,
    categories: Vec<LitStr>,
    printer_columns: Vec<PrinterColumn>,
    scale: Option<Scale>,
    served: Option<LitBool>,
    storage: Option<LitBool>,
}

const KEYS: &str = "group, version, kind, namespaced, status, plural, singular, shortname, \
                    category, printcolumn(...), scale(...), served, storage";

/// Sets `slot` once; a second value is an error at the second one.
fn once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta) -> syn::Result<()> {
    if slot.is_some() {
        let key = meta.path.to_token_stream().to_string();
        return Err(meta.error(format!("`{key}` is given twice")));
    }
    *slot = Some(value);
    Ok(())
}

/// `key` or `key = true|false`.
fn flag(meta: &ParseNestedMeta) -> syn::Result<LitBool> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse()
    } else {
        Ok(LitBool::new(true, meta.path.span()))
    }
}

/// A non-empty string literal.
fn string(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    let lit: LitStr = meta.value()?.parse()?;
    if lit.value().trim().is_empty() {
        return Err(syn::Error::new(lit.span(), "must not be empty"));
    }
    Ok(lit)
}

impl Resource {
    fn parse(input: &DeriveInput) -> syn::Result<Self> {
        let mut resource = Resource::default();
        let mut seen = false;
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("resource")) {
            seen = true;
            attr.parse_nested_meta(|meta| resource.key(&meta))?;
        }
        if !seen {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "#[derive(CustomResource)] needs \
                 #[resource(group = \"...\", version = \"...\", kind = \"...\")]",
            ));
        }
        Ok(resource)
    }

    fn key(&mut self, meta: &ParseNestedMeta) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(format!("unknown key: expected one of {KEYS}")));
        };
        match key.as_str() {
            "group" => once(&mut self.group, string(meta)?, meta),
            "version" => once(&mut self.version, string(meta)?, meta),
            "kind" => once(&mut self.kind, string(meta)?, meta),
            "plural" => once(&mut self.plural, string(meta)?, meta),
            "singular" => once(&mut self.singular, string(meta)?, meta),
            "namespaced" => once(&mut self.namespaced, flag(meta)?, meta),
            "served" => once(&mut self.served, flag(meta)?, meta),
            "storage" => once(&mut self.storage, flag(meta)?, meta),
            "shortname" => {
                self.short_names.push(string(meta)?);
                Ok(())
            }
            "category" => {
                self.categories.push(string(meta)?);
                Ok(())
            }
            "status" => {
                // `status = "AppStatus"` (like kube-rs) or `status = AppStatus`.
                let value = meta.value()?;
                let ty = if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse::<Type>()?
                } else {
                    value.parse::<Type>()?
                };
                once(&mut self.status, ty, meta)
            }
            "printcolumn" => {
                let column = printer_column(meta)?;
                self.printer_columns.push(column);
                Ok(())
            }
            "scale" => {
                let scale = scale(meta)?;
                once(&mut self.scale, scale, meta)
            }
            other => Err(meta.error(format!("unknown key `{other}`: expected one of {KEYS}"))),
        }
    }
}

fn printer_column(meta: &ParseNestedMeta) -> syn::Result<PrinterColumn> {
    let (mut name, mut type_, mut json_path) = (None, None, None);
    let (mut description, mut format, mut priority) = (None, None, None);
    meta.parse_nested_meta(|inner| {
        let key = inner.path.to_token_stream().to_string();
        match key.as_str() {
            "name" => once(&mut name, string(&inner)?, &inner),
            "type" => once(&mut type_, string(&inner)?, &inner),
            "json_path" => once(&mut json_path, string(&inner)?, &inner),
            "description" => once(&mut description, string(&inner)?, &inner),
            "format" => once(&mut format, string(&inner)?, &inner),
            "priority" => once(&mut priority, inner.value()?.parse::<LitInt>()?, &inner),
            other => Err(inner.error(format!(
                "unknown key `{other}` in printcolumn: expected name, type, json_path, \
                 description, format or priority"
            ))),
        }
    })?;
    let missing = |what: &str| {
        meta.error(format!(
            "printcolumn needs `{what} = \"...\"`: \
             printcolumn(name = \"Image\", type = \"string\", json_path = \".spec.image\")"
        ))
    };
    Ok(PrinterColumn {
        name: name.ok_or_else(|| missing("name"))?,
        type_: type_.ok_or_else(|| missing("type"))?,
        json_path: json_path.ok_or_else(|| missing("json_path"))?,
        description,
        format,
        priority,
    })
}

fn scale(meta: &ParseNestedMeta) -> syn::Result<Scale> {
    let (mut spec, mut status, mut selector) = (None, None, None);
    meta.parse_nested_meta(|inner| {
        let key = inner.path.to_token_stream().to_string();
        match key.as_str() {
            "spec_replicas_path" => once(&mut spec, string(&inner)?, &inner),
            "status_replicas_path" => once(&mut status, string(&inner)?, &inner),
            "label_selector_path" => once(&mut selector, string(&inner)?, &inner),
            other => Err(inner.error(format!(
                "unknown key `{other}` in scale: expected spec_replicas_path, \
                 status_replicas_path or label_selector_path"
            ))),
        }
    })?;
    let missing = |what: &str| meta.error(format!("scale needs `{what} = \"...\"`"));
    Ok(Scale {
        spec_replicas_path: spec.ok_or_else(|| missing("spec_replicas_path"))?,
        status_replicas_path: status.ok_or_else(|| missing("status_replicas_path"))?,
        label_selector_path: selector,
    })
}

/// `.method(value)`, or nothing without a value.
fn setter(method: &str, value: Option<&impl ToTokens>) -> TokenStream {
    let method = format_ident!("{method}");
    value.map(|v| quote!(.#method(#v))).unwrap_or_default()
}

/// `#[derive(CustomResource)]` on a spec type.
pub(crate) fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    if let Data::Union(u) = &input.data {
        return Err(syn::Error::new_spanned(
            u.union_token,
            "#[derive(CustomResource)] goes on the spec struct (or enum), not on a union",
        ));
    }
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(CustomResource)] needs a concrete spec type: it cannot be generic",
        ));
    }
    let resource = Resource::parse(&input)?;
    let required = |slot: &Option<LitStr>, key: &str| {
        slot.clone().ok_or_else(|| {
            syn::Error::new_spanned(
                &input.ident,
                format!("#[resource(...)] needs `{key} = \"...\"`"),
            )
        })
    };
    let group = required(&resource.group, "group")?;
    let version = required(&resource.version, "version")?;
    let kind = required(&resource.kind, "kind")?;
    if !group.value().contains('.') {
        return Err(syn::Error::new(
            group.span(),
            "a CRD's group is a DNS subdomain with at least one dot, e.g. \"demo.example.com\"",
        ));
    }
    let kind_value = kind.value();
    if !kind_value.starts_with(|c: char| c.is_ascii_uppercase())
        || !kind_value.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(syn::Error::new(
            kind.span(),
            "a kind is CamelCase ASCII letters and digits, e.g. \"App\"",
        ));
    }
    let ident = &input.ident;
    let namespaced = resource.namespaced.as_ref().is_some_and(LitBool::value);
    let plural = match &resource.plural {
        Some(plural) => quote!(#plural),
        None => {
            // The SDK's pluralisation rule, run at compile time; the
            // buffer has room for the longest suffix it adds.
            let len = kind_value.len() + 3;
            quote! {{
                const PLURAL: ([u8; #len], usize) =
                    ::rekon_sdk::crd::__private::plural::<#len>(#kind);
                ::rekon_sdk::crd::__private::as_str(&PLURAL.0, PLURAL.1)
            }}
        }
    };
    let mut calls = vec![
        setter("singular", resource.singular.as_ref()),
        setter("served", resource.served.as_ref()),
        setter("storage", resource.storage.as_ref()),
    ];
    calls.extend(
        resource
            .short_names
            .iter()
            .map(|s| setter("short_name", Some(s))),
    );
    calls.extend(
        resource
            .categories
            .iter()
            .map(|c| setter("category", Some(c))),
    );
    for c in &resource.printer_columns {
        let (name, type_, path) = (&c.name, &c.type_, &c.json_path);
        let description = setter("description", c.description.as_ref());
        let format = setter("format", c.format.as_ref());
        let priority = setter("priority", c.priority.as_ref());
        calls.push(quote! {
            .printer_column(
                ::rekon_sdk::crd::PrinterColumn::new(#name, #type_, #path)
                    #description #format #priority
            )
        });
    }
    if let Some(s) = &resource.scale {
        let (spec, status) = (&s.spec_replicas_path, &s.status_replicas_path);
        let selector = setter("label_selector_path", s.label_selector_path.as_ref());
        calls.push(quote!(.scale(::rekon_sdk::crd::Scale::new(#spec, #status) #selector)));
    }
    if let Some(status) = &resource.status {
        calls.push(quote!(.status::<#status>()));
    }
    let doc_crd = format!(
        "The CustomResourceDefinition of `{kind_value}` {}.",
        version.value()
    );
    Ok(quote! {
        impl ::rekon_sdk::crd::CustomResource for #ident {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            const NAMESPACED: bool = #namespaced;

            #[doc = #doc_crd]
            fn crd() -> ::rekon_sdk::serde_json::Value {
                ::rekon_sdk::crd::Crd::new(Self::GROUP, Self::VERSION, Self::KIND)
                    .plural(Self::PLURAL)
                    .namespaced(Self::NAMESPACED)
                    #(#calls)*
                    .spec::<Self>()
                    .build()
                    .unwrap_or_else(|e| ::core::panic!("{}", e))
            }
        }
    })
}
