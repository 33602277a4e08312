//! Procedural macros of `rekon-sdk`; use them through `rekon_sdk::reconciler`.
#![deny(missing_docs)]

extern crate proc_macro;

use proc_macro::TokenStream;
use quote::quote;
use syn::{Item, ItemImpl, parse_macro_input};

/// Exports a reconciler as the component's `manifest` and `reconcile`.
///
/// Put it on `impl rekon_sdk::Reconciler for YourType { ... }`. On `wasm32`
/// it emits the export glue (one reconciler per component); on other
/// targets it leaves the impl as it is, so native tests call the same code.
#[proc_macro_attribute]
pub fn reconciler(attr: TokenStream, item: TokenStream) -> TokenStream {
    let attr = proc_macro2::TokenStream::from(attr);
    let item = parse_macro_input!(item as Item);
    match expand(attr, item) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(attr: proc_macro2::TokenStream, item: Item) -> syn::Result<proc_macro2::TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "#[reconciler] takes no arguments",
        ));
    }
    let imp: ItemImpl = match item {
        Item::Impl(imp) => imp,
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "#[reconciler] goes on `impl Reconciler for YourType { ... }`",
            ));
        }
    };
    let Some((bang, path, _)) = &imp.trait_ else {
        return Err(syn::Error::new_spanned(
            &imp.self_ty,
            "#[reconciler] needs a trait impl: `impl Reconciler for YourType`",
        ));
    };
    if let Some(bang) = bang {
        return Err(syn::Error::new_spanned(
            bang,
            "#[reconciler] cannot export a negative impl",
        ));
    }
    if path.segments.last().is_none_or(|s| s.ident != "Reconciler") {
        return Err(syn::Error::new_spanned(
            path,
            "#[reconciler] goes on an impl of `rekon_sdk::Reconciler`",
        ));
    }
    if !imp.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &imp.generics,
            "an exported reconciler cannot be generic: implement Reconciler for one concrete type",
        ));
    }
    let self_ty = &imp.self_ty;
    Ok(quote! {
        #imp

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type __RekonExport = ::rekon_sdk::__private::Export<#self_ty>;
            ::rekon_sdk::bindings::export!(__RekonExport with_types_in ::rekon_sdk::bindings);
        };
    })
}
