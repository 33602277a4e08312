//! Procedural macros of `rekon-sdk`; use them through `rekon_sdk::reconciler`.
#![deny(missing_docs)]

extern crate proc_macro;

mod crd;

use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Item, ItemFn, ItemImpl, Meta, Token, parse_macro_input};

/// Exports a reconciler as the component's `manifest` and `reconcile`.
///
/// On an impl: `#[reconciler] impl rekon_sdk::Reconciler for YourType { ... }`.
///
/// On a function: `#[reconciler(manifest = my_manifest)] fn reconcile(req:
/// Request) -> Result<Action, Error>`, where `my_manifest` is a
/// `fn() -> Manifest`; it also defines a unit struct named after the
/// function in CamelCase (`Reconcile` here), implementing `Reconciler`,
/// for native tests.
///
/// `#[reconciler(webhook)]` on the impl exports the world `operator`: the
/// type also implements `rekon_sdk::webhook::Webhook`, whose webhooks the
/// component serves too.
///
/// On `wasm32` it emits the export glue (one reconciler per component); on
/// other targets it emits nothing more, so native tests call the same code.
#[proc_macro_attribute]
pub fn reconciler(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = proc_macro2::TokenStream::from(attr);
    let item = parse_macro_input!(item as Item);
    let result = match item {
        Item::Impl(imp) => expand_impl(attr, imp),
        Item::Fn(f) => expand_fn(attr, f),
        other => Err(syn::Error::new_spanned(
            other,
            "#[reconciler] goes on `impl Reconciler for YourType { ... }` or on \
             `fn reconcile(req: Request) -> Result<Action, Error>`",
        )),
    };
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn export(self_ty: &impl quote::ToTokens) -> proc_macro2::TokenStream {
    quote! {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __RekonExport = ::rekon_sdk::__private::Export<#self_ty>;
            ::rekon_sdk::bindings::export!(__RekonExport with_types_in ::rekon_sdk::bindings);
        };
    }
}

fn export_operator(self_ty: &impl quote::ToTokens) -> proc_macro2::TokenStream {
    quote! {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __RekonExport = ::rekon_sdk::__private::ExportOperator<#self_ty>;
            ::rekon_sdk::bindings_operator::export!(
                __RekonExport with_types_in ::rekon_sdk::bindings_operator
            );
        };
    }
}

/// Exports a module that only serves webhooks (the world `webhook`):
/// `#[webhook] impl rekon_sdk::webhook::Webhook for YourType { ... }`.
/// Its [`Webhooks`] must be `Webhooks::named(name, version)`. A type that
/// also reconciles uses `#[reconciler(webhook)]` on its `Reconciler` impl
/// instead.
///
/// [`Webhooks`]: https://docs.rs/rekon-sdk/latest/rekon_sdk/webhook/struct.Webhooks.html
#[proc_macro_attribute]
pub fn webhook(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = proc_macro2::TokenStream::from(attr);
    let item = parse_macro_input!(item as Item);
    let result = match item {
        Item::Impl(imp) => check_impl(&attr, &imp, "webhook", "Webhook").map(|()| {
            let self_ty = &imp.self_ty;
            quote! {
                #imp
                #[cfg(target_arch = "wasm32")]
                const _: () = {
                    type __RekonExport = ::rekon_sdk::__private::ExportWebhook<#self_ty>;
                    ::rekon_sdk::bindings_webhook::export!(
                        __RekonExport with_types_in ::rekon_sdk::bindings_webhook
                    );
                };
            }
        }),
        other => Err(syn::Error::new_spanned(
            other,
            "#[webhook] goes on `impl Webhook for YourType { ... }`",
        )),
    };
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn check_impl(
    attr: &proc_macro2::TokenStream,
    imp: &ItemImpl,
    macro_name: &str,
    trait_name: &str,
) -> syn::Result<()> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            format!("#[{macro_name}] on an impl takes no arguments"),
        ));
    }
    let Some((bang, path, _)) = &imp.trait_ else {
        return Err(syn::Error::new_spanned(
            &imp.self_ty,
            format!("#[{macro_name}] needs a trait impl: `impl {trait_name} for YourType`"),
        ));
    };
    if let Some(bang) = bang {
        return Err(syn::Error::new_spanned(
            bang,
            format!("#[{macro_name}] cannot export a negative impl"),
        ));
    }
    if path.segments.last().is_none_or(|s| s.ident != trait_name) {
        return Err(syn::Error::new_spanned(
            path,
            format!("#[{macro_name}] goes on an impl of `{trait_name}`"),
        ));
    }
    if !imp.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &imp.generics,
            format!(
                "an exported {macro_name} cannot be generic: implement {trait_name} for one concrete type"
            ),
        ));
    }
    Ok(())
}

fn expand_impl(
    attr: proc_macro2::TokenStream,
    imp: ItemImpl,
) -> syn::Result<proc_macro2::TokenStream> {
    let with_webhook = match attr.to_string().as_str() {
        "" => false,
        "webhook" => true,
        _ => {
            return Err(syn::Error::new_spanned(
                attr,
                "#[reconciler] on an impl takes no argument, or `webhook` when the type \
                 also implements `rekon_sdk::webhook::Webhook`",
            ));
        }
    };
    check_impl(
        &proc_macro2::TokenStream::new(),
        &imp,
        "reconciler",
        "Reconciler",
    )?;
    let glue = if with_webhook {
        export_operator(&imp.self_ty)
    } else {
        export(&imp.self_ty)
    };
    Ok(quote! {
        #imp
        #glue
    })
}

fn expand_fn(attr: proc_macro2::TokenStream, f: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let args = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr.clone())?;
    let mut manifest = None;
    for arg in &args {
        match arg {
            Meta::NameValue(nv) if nv.path.is_ident("manifest") => {
                manifest = Some(nv.value.clone())
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "unknown argument: expected `manifest = path::to::manifest_fn`",
                ));
            }
        }
    }
    let Some(manifest) = manifest else {
        return Err(syn::Error::new_spanned(
            &f.sig,
            "#[reconciler] on a function needs its manifest: \
             `#[reconciler(manifest = my_manifest)]` with `fn my_manifest() -> Manifest`",
        ));
    };
    if let Some(asyncness) = &f.sig.asyncness {
        return Err(syn::Error::new_spanned(
            asyncness,
            "a reconcile function cannot be async",
        ));
    }
    if !f.sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &f.sig.generics,
            "a reconcile function cannot be generic",
        ));
    }
    if f.sig.inputs.len() != 1 {
        return Err(syn::Error::new_spanned(
            &f.sig.inputs,
            "a reconcile function takes one argument: `req: Request`",
        ));
    }
    let name = &f.sig.ident;
    let vis = &f.vis;
    let camel: String = name
        .to_string()
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|first| first.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    let ty = format_ident!("{}", camel, span = name.span());
    let doc = format!("The reconciler exported from `{name}` (made by `#[reconciler]`).");
    let glue = export(&ty);
    Ok(quote! {
        #f

        #[doc = #doc]
        #vis struct #ty;

        impl ::rekon_sdk::Reconciler for #ty {
            fn manifest() -> ::rekon_sdk::Manifest {
                #manifest()
            }

            fn reconcile(
                request: ::rekon_sdk::Request,
            ) -> ::core::result::Result<::rekon_sdk::Action, ::rekon_sdk::Error> {
                #name(request)
            }
        }

        #glue
    })
}

/// Implements `rekon_sdk::crd::CustomResource` for a spec type: its group,
/// version, kind and CRD, from `#[resource(...)]`. See the
/// [`rekon_sdk::crd`](https://docs.rs/rekon-sdk/latest/rekon_sdk/crd/index.html)
/// module for the keys and an example.
#[proc_macro_derive(CustomResource, attributes(resource))]
pub fn derive_custom_resource(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as syn::DeriveInput);
    crd::derive(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
