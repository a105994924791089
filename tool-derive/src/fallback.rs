//! What a derive expands to when its input has mistakes: every error, and stub impls so that
//! uses of the type add no errors of their own.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{Input, Mode};

pub(crate) fn expand(input: &Input<'_>, error: &syn::Error) -> TokenStream {
    let krate = &input.krate;
    let p = quote!(#krate::__private);
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let errors = error.to_compile_error();
    let tool = (input.mode == Mode::Tool).then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::Tool for #ident #ty_generics #where_clause {
                const NAME: &'static str = "";

                fn description() -> &'static str {
                    ""
                }

                fn input_schema() -> &'static #p::Value {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #errors
        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #krate::Argument for #ident #ty_generics #where_clause {
                fn schema(
                    _: &mut #p::SchemaGen,
                    _: &#p::Constraints,
                ) -> #p::Value {
                    ::core::unreachable!()
                }

                fn parse<'__de, __D: #p::Deserializer<'__de>, __C: #p::ConstConstraints>(
                    _: __D,
                    _: &mut #p::Cx,
                    _: &#p::Path<'_>,
                ) -> #p::Result<#p::Option<Self>, __D::Error> {
                    ::core::unreachable!()
                }
            }
            #tool
        };
    }
}
