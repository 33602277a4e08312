//! placeholder
extern crate proc_macro;
